"""The engine a GUI gets: the USI protocol (``messiah-usi``, usi.py), its options (options.py), time management
(timeman.py), the mate answer of ``go mate`` (mate.py), and the one place that builds the evaluator and the
searcher from the option values (engine.py), which every tool that plays uses too. It sits on the core
(messiah/) and the searches (messiah.search); nothing here needs torch or the training code."""
