"""The `rules` drafter: the units an expert writes for a reference, by rules over word lists, no model.

`draft_reference(sentences)` drafts a whole reference sentence by sentence; `draft_sentence` one
sentence (`draft`). Each step is a plain function, in a module of its own:

1. `clauses.without_furniture`: page furniture the guidelines leave out ("CLICK HERE for ...") gives no unit,
   a furniture label opening a sentence ("READ : ...") goes;
2. `references.resolve_references`: a name met earlier in the reference replaces "he"/"she", a role ("The
   Welshman", "German boss"), a surname alone ("Adam", "Mr Carroll") or a title before a name, and
   stands in for the missing subject of a headline ("Came up with idea ..."); the "X is Y" facts this
   reveals, and those of a role written before a name ("single mother Gina Michelle"), are units;
3. `clauses.split_run_on`: a run-on sentence is cut where a new one starts without punctuation (after a
   closing quote, at "The"/"He" after a word, at a comma splice);
4. `tokens.tokenize` and `clauses.split_clauses`: ";", a fronted subordinate clause, comma-set relative clauses and
   appositions (their antecedent repeated as subject), "and"/"but" with a verb on the right;
5. `predicates`: `split_subject`, `split_entity_lists`, `split_word_pairs`, `split_adjuncts`: one unit per subject
   conjunct, per listed name or year, per noun of a pair, per adjunct (the core, then the verb with
   each adjunct; a long object is repeated only beside a single adjunct);
6. `embedded.embedded_clauses`: a non-finite clause ("after winning X", "despite being jailed", "to show")
   and the complement of a verb of saying ("claims she shared ...") become finite units, drafted in turn.

Runs of capitalised words and numbers are never cut, nor quotations. Verbs come from the word lists
in `lexicon` (and `words`, the rules' own lists) and lemminflect's lexicon of English word forms (shipped in its package; it also gives
"won" for "winning"). When no verb is found the sentence is one draft.
"""

from ...language.tokens import first_verb, tokenize, verb_form
from .clauses import split_clauses, split_run_on
from .draft import draft_reference, draft_sentence

__all__ = ["draft_reference", "draft_sentence", "first_verb", "split_clauses", "split_run_on", "tokenize", "verb_form"]
