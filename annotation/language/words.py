"""Word lists of the rules drafter: adverbs, adjunct heads, verbs of saying, person nouns, titles, names."""

import re

TOKEN = re.compile(r"\d+(?:[.,:]\d+)*\w*|\w+(?:['’\-]\w+)*|['’](?:s|d|ll|re|ve|m)\b|[^\w\s]")
CLOSING = {".", "!", "?", '"', "'", "''", "”", "’"}
ADVERBS = frozenset(
    [
        "now",
        "also",
        "still",
        "already",
        "just",
        "then",
        "later",
        "recently",
        "reportedly",
        "allegedly",
        "currently",
        "only",
        "finally",
        "eventually",
        "even",
        "never",
        "again",
        "previously",
        "initially",
        "subsequently",
    ]
)
PAST = frozenset(["was", "were", "had", "did", "said", "told"])
SUBJECT_PLACE = frozenset({"from", "in", "at"})

PRONOUNS = frozenset(["he", "she", "they", "we", "it", "i", "you"])

ADJUNCT = frozenset(
    [
        "because",
        "after",
        "before",
        "since",
        "while",
        "when",
        "during",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "despite",
        "following",
        "amid",
        "near",
        "over",
        "by",
        "under",
        "against",
        "without",
        "across",
        "through",
        "into",
        "toward",
        "towards",
    ]
)


TIME_WORDS = frozenset(
    [
        "year",
        "week",
        "month",
        "night",
        "season",
        "summer",
        "winter",
        "spring",
        "autumn",
        "weekend",
        "morning",
        "evening",
        "afternoon",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "century",
        "decade",
        "time",
        "period",
        "half",
        "minute",
        "minutes",
        "hour",
        "hours",
        "day",
        "days",
        "weeks",
        "months",
        "years",
    ]
)
QUOTES = frozenset(["'", '"', "``", "''", "‘", "’", "“", "”"])

BOILERPLATE = re.compile(
    r"^\W*(click here|scroll down|read more|see more|for more|follow us|watch the video|share this|"
    r"sign up|subscribe|download the|like us on|do you know more|contact us|to see more|warning : graphic)\b",
    re.IGNORECASE,
)
# Page furniture labels that open a sentence of a news page ("READ : It wo n't be long ...",
# "VIDEO : ..."): known labels followed by a colon; a speaker ("Attorney : ...") is no label.
# ("READ MORE : ..." is BOILERPLATE: the whole sentence goes.)
FURNITURE = re.compile(
    r"^\W*(?:(?:read|video|watch|pictured|picture|photos|gallery|related|see also)\s*:\s*)+",
    re.IGNORECASE,
)


NEW_SENTENCE = frozenset(["The", "He", "She", "They", "It", "His", "Her", "Their", "A", "An", "But", "This", "These"])

NONFINITE_LEAD = frozenset(["after", "despite", "while", "since", "when"])
SUBJECT_PRONOUNS = frozenset(["he", "she", "they", "it", "i", "we"])

PERSON_NOUNS = frozenset(
    [
        "boss",
        "manager",
        "coach",
        "star",
        "player",
        "striker",
        "midfielder",
        "forward",
        "defender",
        "goalkeeper",
        "keeper",
        "captain",
        "winger",
        "ace",
        "actor",
        "actress",
        "singer",
        "model",
        "mother",
        "father",
        "wife",
        "husband",
        "girlfriend",
        "boyfriend",
        "girl",
        "boy",
        "teen",
        "teenager",
        "prisoner",
        "officer",
        "president",
        "minister",
        "leader",
        "chief",
        "owner",
        "driver",
        "pilot",
        "victim",
        "suspect",
        "attorney",
        "doctor",
        "nurse",
        "pensioner",
        "grandmother",
        "grandfather",
        "daughter",
        "son",
        "champion",
        "winner",
        "international",
        "legend",
        "veteran",
        "candidate",
        "chef",
        "presenter",
        "host",
        "reporter",
        "journalist",
        "businessman",
        "businesswoman",
        "billionaire",
        "millionaire",
        "founder",
        "director",
        "chairman",
        "golfer",
        "boxer",
        "cricketer",
        "footballer",
        "rider",
        "runner",
        "youngster",
        "star",
        "dominatrix",
        "student",
        "teacher",
        "musician",
        "rapper",
        "politician",
        "senator",
        "governor",
        "mayor",
        "general",
        "soldier",
        "killer",
        "gunman",
        "man",
        "woman",
    ]
)
INDEFINITE = frozenset(
    ["a", "an", "one", "another", "some", "two", "three", "several", "many", "his", "her", "their", "its", "our"]
)
TITLES = frozenset(["Mr", "Mrs", "Ms", "Miss", "Dr", "Sir", "Dame", "Lord", "Lady"])
# Last words of names that are not people: a surname alone is never expanded to these.
NOT_SURNAMES = frozenset(
    [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "City",
        "United",
        "Street",
        "Road",
        "League",
        "Cup",
        "Championship",
        "Club",
        "Park",
        "Church",
        "House",
        "Palace",
        "Council",
        "Party",
        "Office",
        "University",
        "Airport",
        "Station",
        "Hospital",
        "Court",
        "Police",
        "Service",
        "Times",
        "News",
        "Motors",
        "Award",
        "Open",
        "Prize",
        "Games",
        "Square",
        "Bridge",
        "Hall",
        "Centre",
        "Center",
        "Museum",
        "School",
        "College",
        "Group",
        "Bank",
    ]
)
NAME_WORD = re.compile(r"^[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*$|^Mc[A-Z][a-z]+$|^[A-Z][a-z]*[A-Z][a-z]+$")

# Verbs whose complement clause is stated true ("revealed she was pregnant" states she was).
FACTIVE = frozenset(
    [
        "reveal",
        "reveals",
        "revealed",
        "show",
        "shows",
        "showed",
        "shown",
        "find",
        "finds",
        "found",
        "discover",
        "discovers",
        "discovered",
        "know",
        "knows",
        "knew",
        "realise",
        "realises",
        "realised",
        "realize",
        "realizes",
        "realized",
        "learn",
        "learns",
        "learned",
        "learnt",
        "notice",
        "notices",
        "noticed",
        "confirm",
        "confirms",
        "confirmed",
        "admit",
        "admits",
        "admitted",
    ]
)

# Subordinators: what follows them is a clause of its own, kept whole.
SUBORDINATORS = frozenset(
    [
        "because",
        "after",
        "before",
        "since",
        "while",
        "when",
        "as",
        "although",
        "though",
        "until",
        "unless",
        "if",
        "once",
        "whereas",
        "whether",
    ]
)
# Verbs true of a group only: a coordinated subject of theirs is not split ("X and Y met").
COLLECTIVE_VERBS = frozenset(
    [
        "meet",
        "marry",
        "wed",
        "date",
        "divorce",
        "separate",
        "split",
        "share",
        "agree",
        "disagree",
        "clash",
        "fight",
        "argue",
        "collide",
        "draw",
        "tie",
        "combine",
        "unite",
        "merge",
        "join",
        "team",
        "gather",
        "differ",
    ]
)
# Phrasal verbs true of a group only ("X and Y face off"): the verb's lemma and its particle.
COLLECTIVE_PHRASAL = frozenset([("face", "off"), ("square", "off")])
# Words opening a condition or a question: what follows is not stated as a fact.
CONDITIONS = frozenset(["if", "unless", "whether", "until"])
# Roles of a person relative to another, or that another person of a story plays: never
# resolved to the person named last, nor made an "X is Y" fact without whose.
RELATIONAL = frozenset(
    [
        "victim",
        "wife",
        "husband",
        "mother",
        "father",
        "girlfriend",
        "boyfriend",
        "daughter",
        "son",
        "grandmother",
        "grandfather",
        "friend",
        "partner",
        "brother",
        "sister",
        "suspect",
        "killer",
        "gunman",
        "attacker",
        "neighbour",
        "neighbor",
    ]
)
# First words of a role written lower case after "is" ("Former Barcelona man" -> "a former ...").
LOWER_FIRST = frozenset(["former", "ex", "new", "young", "old", "retired", "late", "veteran", "current"])
# Prepositions and subordinators whose phrase belongs to the verb, never to a noun before it.
VERBAL_PREPOSITIONS = frozenset(
    ["during", "after", "before", "since", "despite", "following", "amid", "because", "while", "when"]
)
MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
# Subordinators whose clause is stated true as much as the main clause: "X did A because Y did B"
# gives "X did A." and "Y did B." ("when" only in the past: "is happy when it rains" is no fact).
SPLIT_SUBORDINATORS = frozenset(["because", "as", "after", "since", "although", "though", "while", "whereas", "when"])
# Adjectives that describe whatever they modify: "a huge hedge" is a hedge that is huge.
DESCRIBING = frozenset(
    [
        "huge",
        "big",
        "small",
        "large",
        "massive",
        "tiny",
        "giant",
        "enormous",
        "hot",
        "cold",
        "deep",
        "ornate",
        "spectacular",
        "stunning",
        "beautiful",
        "bizarre",
        "brutal",
        "shocking",
        "dramatic",
        "heavy",
        "tall",
        "rare",
        "famous",
        "infamous",
        "impressive",
        "momentary",
        "serious",
        "severe",
        "dangerous",
        "horrific",
        "terrible",
        "tragic",
        "incredible",
        "amazing",
        "extraordinary",
        "unusual",
        "strange",
        "remarkable",
        "violent",
        "emotional",
        "angry",
        "furious",
        "happy",
        "sad",
        "naked",
        "empty",
        "crowded",
        "expensive",
        "cheap",
        "luxurious",
        "fierce",
        "stunning",
        "controversial",
        "devastating",
        "deadly",
        "fatal",
        "bloody",
        "vicious",
        "lavish",
        "successful",
        "popular",
        "wealthy",
        "rich",
        "poor",
        "elderly",
        "disabled",
        "pregnant",
        "drunk",
        "injured",
    ]
)
# Words before a noun phrase's adjective: "the huge hedge", "their huge hedge".
NOUN_OPENERS = frozenset(
    ["a", "an", "the", "his", "her", "their", "its", "our", "my", "your", "this", "that", "these", "those"]
)
# Words of a span of time before "after"/"before": "a day after the break - in" is one phrase.
TIME_SPANS = frozenset(
    [
        "moment",
        "moments",
        "second",
        "seconds",
        "minute",
        "minutes",
        "hour",
        "hours",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "shortly",
        "soon",
        "long",
        "just",
    ]
)
# Verbs that report: what follows them may be inside the report, so it is not split off.
REPORTING = frozenset(
    [
        "say",
        "says",
        "said",
        "claim",
        "claims",
        "claimed",
        "tell",
        "tells",
        "told",
        "insist",
        "insists",
        "insisted",
        "believe",
        "believes",
        "believed",
        "think",
        "thinks",
        "thought",
        "deny",
        "denies",
        "denied",
        "warn",
        "warns",
        "warned",
        "allege",
        "alleges",
        "alleged",
        "suggest",
        "suggests",
        "suggested",
        "argue",
        "argues",
        "argued",
        "admit",
        "admits",
        "admitted",
        "report",
        "reports",
        "reported",
    ]
)
BE = frozenset(["is", "are", "was", "were", "be", "been", "being", "am"])
# Particles of a phrasal verb ("came up with", "pulled over"): part of the verb.
PARTICLES = frozenset(["up", "down", "out", "off", "back", "away"])
COUNTS = frozenset(
    ["a", "an", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "several", "few"]
)
WH_WORDS = frozenset(["what", "who", "whom", "whose", "which", "why", "how", "where", "whether"])
