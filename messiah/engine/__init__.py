"""The engine a GUI gets: the USI protocol (``messiah-usi``), its options, time management and the mate
answer of ``go mate``. It sits on the core (messiah/) and the searches (messiah.search); nothing here needs
torch or the training code."""
