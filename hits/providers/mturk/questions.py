"""The XML documents MTurk takes as strings: ExternalQuestion, QuestionForm, AnswerKey.

Namespaces from MTurk's "Data Structure Schema Locations": ExternalQuestion 2006-07-14,
QuestionForm 2017-11-06, AnswerKey 2005-10-01. Built with ElementTree, so text is escaped.
"""

from xml.etree import ElementTree as ET

EXTERNAL_QUESTION_NS = "http://mechanicalturk.amazonaws.com/AWSMechTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
QUESTION_FORM_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2017-11-06/QuestionForm.xsd"
ANSWER_KEY_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/AnswerKey.xsd"
MAX_QUESTION_BYTES = 65535
PRESENT, ABSENT = "present", "absent"


def _child(parent, tag: str, text: str | None = None):
    node = ET.SubElement(parent, tag)
    if text is not None:
        node.text = text
    return node


def _serialize(root) -> str:
    return ET.tostring(root, encoding="unicode", xml_declaration=False)


def _check_size(xml: str, what: str) -> str:
    size = len(xml.encode("utf-8"))
    if size > MAX_QUESTION_BYTES:
        raise ValueError(f"{what} is {size} bytes; MTurk accepts at most {MAX_QUESTION_BYTES}")
    return xml


def external_question(url: str, frame_height: int = 0) -> str:
    """The task page as MTurk shows it: HTTPS only; FrameHeight 0 lets MTurk size the frame."""
    if not url.startswith("https://"):
        raise ValueError(f"MTurk only loads task pages over HTTPS, not {url!r}")
    root = ET.Element("ExternalQuestion", xmlns=EXTERNAL_QUESTION_NS)
    _child(root, "ExternalURL", url)
    _child(root, "FrameHeight", str(frame_height))
    return _check_size(_serialize(root), "The ExternalQuestion")


def question_id(item_id: int, acu_id) -> str:
    return f"item{item_id}-acu{acu_id}"


def qualification_form(title: str, instructions: str, items: list[dict]) -> str:
    """A QuestionForm with one Present / Not present question per ACU of each gold item.

    `items`: [{"id": item id, "summary": text, "acus": [(acu id, text), ...]}].
    """
    root = ET.Element("QuestionForm", xmlns=QUESTION_FORM_NS)
    overview = _child(root, "Overview")
    _child(overview, "Title", title)
    _child(overview, "Text", instructions)
    for n, item in enumerate(items, start=1):
        intro = _child(root, "Overview")
        _child(intro, "Title", f"Summary {n}")
        _child(intro, "Text", item["summary"])
        for acu_id, text in item["acus"]:
            question = _child(root, "Question")
            _child(question, "QuestionIdentifier", question_id(item["id"], acu_id))
            _child(question, "IsRequired", "true")
            content = _child(question, "QuestionContent")
            _child(content, "Text", f"Does summary {n} state: {text}")
            selection = _child(_child(question, "AnswerSpecification"), "SelectionAnswer")
            _child(selection, "StyleSuggestion", "radiobutton")
            selections = _child(selection, "Selections")
            for ident, label in ((PRESENT, "Present"), (ABSENT, "Not present")):
                option = _child(selections, "Selection")
                _child(option, "SelectionIdentifier", ident)
                _child(option, "Text", label)
    return _check_size(_serialize(root), "The qualification test")


def answer_key(items: list[dict]) -> str:
    """The AnswerKey: 1 point per right answer, the score mapped to a percentage (0-100).

    `items`: [{"id": item id, "answers": {acu id: bool}}].
    """
    root = ET.Element("AnswerKey", xmlns=ANSWER_KEY_NS)
    total = 0
    for item in items:
        for acu_id, truth in item["answers"].items():
            question = _child(root, "Question")
            _child(question, "QuestionIdentifier", question_id(item["id"], acu_id))
            for ident, score in ((PRESENT, int(bool(truth))), (ABSENT, int(not truth))):
                option = _child(question, "AnswerOption")
                _child(option, "SelectionIdentifier", ident)
                _child(option, "AnswerScore", str(score))
            total += 1
    mapping = _child(_child(root, "QualificationValueMapping"), "PercentageMapping")
    _child(mapping, "MaximumSummedScore", str(total))
    return _serialize(root)
