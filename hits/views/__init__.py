"""Views of the crowd app: worker pages and lead pages."""
