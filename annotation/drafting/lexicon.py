"""Small word lists the rule-based drafter uses to find verbs, clause links and entities."""

AUXILIARIES = frozenset(
    """is are was were be been being am has have had will would shall should can could may might must
    do does did 's 're 've 'll 'd isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't can't
    couldn't don't doesn't didn't""".split()
)

# Frequent verbs of news text (base forms); inflections are generated below.
_VERB_ROOTS = """accept accuse add admit agree aim allow announce appear apply argue arrest arrive ask attack
assist attend avoid ban battle beat become begin believe blame break bring build buy call campaign cancel capture
care carry catch cause celebrate change charge claim close come complete confirm consider continue cost
create cut deal decide declare deliver deny describe die discover drive drop earn end enjoy escape evacuate
expect explain face fail fall feature feel fight file find finish fire force found gain get give go grow
hand happen head help hit hold hope hurt identify include increase injure insist investigate join keep kill
know land launch lead leave let lie like live lose make manage mark meet miss move name need offer open
order own pay plan play plead post praise prepare present prevent promise protest prove provide publish pull
push put raise reach receive record refuse regard release remain report require rescue reveal rise rule run
save say score see seek seem sell send sentence serve set share shoot show sign sit sleep spend spark stand
start state stay steal stop strike submerge suffer suggest support survive suspend take talk target tell
test thank think threaten throw tour train transfer travel try turn urge use visit vote wait walk want warn
watch wear win work worry write""".split()

_IRREGULAR = """said told found made took gave went gone came become began begun brought built bought caught
chose chosen drew drawn drove driven ate fell felt fought flew flown forgot forgiven froze got gotten grew
grown held hid hit hurt kept knew known laid led left lent let lay lost meant met paid put quit ran rang
rose risen saw seen sold sent set shook shot shut sang sank sat slept spoke spoken spent spun stood stole
stolen struck swore swum took taken taught tore thrown threw thought understood woke won wore written wrote
broke broken hung""".split()


def _inflections(root: str) -> set[str]:
    forms = {root}
    if root.endswith("e"):
        forms |= {root + "s", root + "d", root[:-1] + "ing"}
    elif root.endswith("y") and root[-2:-1] not in "aeiou":
        forms |= {root[:-1] + "ies", root[:-1] + "ied", root + "ing"}
    elif root.endswith(("s", "sh", "ch", "x", "z")):
        forms |= {root + "es", root + "ed", root + "ing"}
    else:
        forms |= {root + "s", root + "ed", root + "ing"}
        if len(root) <= 4 and root[-1] in "bdgmnprt" and root[-2] in "aeiou" and root[-3:-2] not in "aeiou":
            forms |= {root + root[-1] + "ed", root + root[-1] + "ing"}
    return forms


VERBS = frozenset(AUXILIARIES | set(_IRREGULAR) | {f for r in _VERB_ROOTS for f in _inflections(r)})

# Words that end like verbs but are not (ambiguous nouns and adjectives are left out of VERBS
# unless a verb reading dominates in news summaries).
NOT_VERBS = frozenset(
    """need red bed shed seed speed feed hundred united wed indeed led-lights news series species
    things ring king thing nothing something anything everything morning evening during bring-back
    interesting""".split()
)

DETERMINERS = frozenset("a an the this that these those his her its their our my your some any every each no".split())
PREPOSITIONS = frozenset(
    """of in on at by for with from to into onto over under about after before during since until against
    among between through across near without within""".split()
)
RELATIVES = frozenset("who which whom whose where".split())
FRONT_SUBORDINATORS = frozenset("after when while although though because as if since before once despite".split())
COORDINATORS = frozenset({"and", "but"})
PLURAL_TO_SINGULAR = {"have": "has", "are": "is", "were": "was"}
