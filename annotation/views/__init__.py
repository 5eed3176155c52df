"""Views of the annotation app, one module per area."""
