"""What a user runs on top of the engine: analysis and its move-score picture, game annotation, the browser
board, benchmarks, model evaluation on data and the win-rate fit."""
