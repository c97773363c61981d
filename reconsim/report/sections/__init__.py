"""The report's sections: each module owns one question's numbers, charts and words."""
