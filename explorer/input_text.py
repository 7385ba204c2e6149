"""`printable` where the panels import it (the input texts are `model.interpret.input_texts`)."""
from model.interpret.input_texts import printable  # noqa: F401
