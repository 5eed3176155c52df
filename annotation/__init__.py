"""Annotation data (the lowest app layer): datasets, references, sentences, ACUs, systems, summaries; authoring; readers."""
