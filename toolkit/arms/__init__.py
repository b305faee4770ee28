"""Arms: named combinations of pipeline stages run against a frozen manifest."""
