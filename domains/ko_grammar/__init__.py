"""Korean orthography correction (어문 규범 교정): choose or correct a sentence and say why."""
