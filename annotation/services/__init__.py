"""Writes on annotation data: `authoring` (assigning references, saving ACUs, review, time on task)
and `acus` (an ACU's text after it was written, frozen once judged)."""
