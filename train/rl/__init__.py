"""Self-play reinforcement learning (``messiah rl``): DQN with Q(lambda) by self-play, beside train/ and above
search/ (actors play through the searches, the learner trains through messiah.train.trainer.Trainer). No module
of the engine imports it."""
