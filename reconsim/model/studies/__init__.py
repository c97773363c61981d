"""Published studies the model reproduces, each with its figures and the cells behind them."""
