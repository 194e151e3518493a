"""Chat templates for supervised training: the model's own template, with the assistant's
tokens marked (`{% generation %}`), so a loss can be put on the replies alone.

`transformers` returns an assistant mask (`return_assistant_tokens_mask=True`, which TRL's
`assistant_only_loss` uses) only for templates holding those markers. TRL ships marked
versions of the templates it knows; SmolLM2's ChatML template is not among them, so it
is marked here. A marked template must render every conversation exactly as the original
does: that is checked on probe conversations before it is returned.
"""

from __future__ import annotations

import re
from typing import Any

from lifelong_gym.errors import ChatTemplateError

_MARKERS = re.compile(r"\{%-?\s*generation\s*-?%\}")

# SmolLM2's (ChatML) turn, as its template writes it, and the same with the assistant's
# content and turn end marked (the turn end is trained: the model learns to stop)
_CHATML_TURN = (
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
)
_CHATML_MARKED = (
    "{{'<|im_start|>' + message['role'] + '\n'}}"
    "{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}"
    "{{ '\n' }}"
)

PROBES: tuple[list[dict[str, str]], ...] = (
    [{"role": "user", "content": "Task: count the rows."}],
    [
        {"role": "user", "content": "Task: count the rows."},
        {"role": "assistant", "content": "Action: Operation\n```sql\nSELECT 1;\n```"},
        {"role": "user", "content": "[(1,)]"},
        {"role": "assistant", "content": "Action: Answer\nFinal Answer: [(1,)]"},
    ],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": " spaced \n"},
    ],
)


def has_generation_markers(template: str) -> bool:
    """Whether `template` marks the assistant's tokens with `{% generation %}`."""
    return _MARKERS.search(template) is not None


def training_chat_template(tokenizer: Any) -> str:
    """`tokenizer`'s chat template with the assistant's tokens marked for an assistant mask.

    A template already marked is returned as it is; SmolLM2's ChatML template is marked
    here; others are marked by TRL where TRL knows them. Otherwise `ChatTemplateError`
    names the fix (a template with `{% generation %}` around the assistant's turns).
    """
    template = tokenizer.chat_template
    if not isinstance(template, str) or not template:
        raise ChatTemplateError("the tokenizer has no chat template to train with")
    if has_generation_markers(template):
        return template
    if _CHATML_TURN in template:
        marked = template.replace(_CHATML_TURN, _CHATML_MARKED)
    else:
        marked = _trl_training_template(tokenizer)
    for messages in PROBES:
        original = tokenizer.apply_chat_template(messages, tokenize=False, chat_template=template)
        again = tokenizer.apply_chat_template(messages, tokenize=False, chat_template=marked)
        if original != again:
            raise ChatTemplateError(
                "the marked chat template renders a conversation differently from the model's "
                "own; pass a template with {% generation %} around the assistant's turns"
            )
    return marked


def _trl_training_template(tokenizer: Any) -> str:
    """TRL's marked version of a template it knows."""
    try:
        from trl.chat_template_utils import get_training_chat_template
    except ImportError:
        get_training_chat_template = None
    marked = None
    if get_training_chat_template is not None:
        try:
            marked = get_training_chat_template(tokenizer)
        except ValueError:
            marked = None
    if not marked:
        raise ChatTemplateError(
            "no training version of this chat template is known (neither here nor in TRL); "
            "set tokenizer.chat_template to one with {% generation %} around the assistant's turns"
        )
    return marked
