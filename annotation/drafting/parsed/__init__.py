"""The `parsed` drafter: the `rules` drafter with a dependency parse (spaCy) deciding where a
sentence splits into simple sentences.

`draft_parsed_reference(sentences, nlp)` drafts a whole reference as `rules.draft_reference` does
(names carried within the reference, the "X is Y" facts they reveal, quotes balanced, no draft
that repeats another plus a modifier); each sentence is parsed and `clauses.simple_sentences`
takes out of it what the parse makes unambiguous (a comma-set relative clause or apposition
becomes a sentence about its noun; conjoined verbs of the main predicate one sentence each, with
the shared subject; `coordination`: two objects joined by "and" one each; `adjuncts`: two or more
adjuncts of the verb, the core with each), and the rules draft each simple sentence. Where the parse is unusual or
splits nothing, the rules draft the sentence as they would alone. `model.load_parser` loads the
spaCy pipeline from an installed package or a local directory; nothing is downloaded.
"""

from .draft import draft_parsed_reference, draft_parsed_sentence
from .model import DEFAULT_MODEL, load_parser, parser_installed

__all__ = ["DEFAULT_MODEL", "draft_parsed_reference", "draft_parsed_sentence", "load_parser", "parser_installed"]
