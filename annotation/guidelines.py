"""The built-in ACU writing guidelines (a lead can replace them per dataset)."""

DEFAULT_GUIDELINES = """\
Write the Atomic Content Units (ACUs) of each reference sentence: short facts that need no further splitting.

1. The first ACU of a sentence carries the main fact of its main clause, with its subject.
   "Anuradha Koirala has been sleeping outdoors."
2. Each further ACU adds exactly one fact, plus only the minimal context it needs to be understood on its own.
   "Pushpa Basnet cares for 45 children." — not "Pushpa Basnet, who cares for 45 children, was forced to evacuate."
3. One ACU, one fact: if it joins two facts with "and" or "but", split it. A noun phrase such as "women and girls" is one fact.
4. Keep the subject explicit; replace a pronoun by who or what it stands for.
5. Quotations: write what was said as a fact about the speaker ("Koirala said the girls are vulnerable."); keep a quotation word for word only when its wording is the point.
6. Leave out extraneous adjectives and adverbs unless they carry information (numbers, places, times, names do).
7. Noisy reference text (broken tokens, bylines, "click here", photo credits): write no ACU for the noise; fix obvious typos in names you are sure of.
8. Do not add knowledge that is not in the reference; do not merge facts from different sentences.
9. Each ACU should be checkable against a summary with a simple yes or no.
"""


def guidelines_for(dataset) -> str:
    return dataset.guidelines.strip() or DEFAULT_GUIDELINES
