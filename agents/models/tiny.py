"""A tiny Llama-style chat model with random weights, built locally (for tests and smoke runs)."""

from __future__ import annotations

from pathlib import Path

# Offered tools are listed first, and past calls written as the `<tool_call>` markup the
# environments parse; a conversation without tools renders as plain turns. The assistant's
# turns are marked (`{% generation %}`, which renders nothing) for an assistant-only loss.
_TINY_TURN = (
    "{{ message['content'] or '' }}{% for call in message.tool_calls or [] %}<tool_call>"
    "{{ {'name': call.function.name, 'arguments': call.function.arguments} | tojson }}"
    "</tool_call>{% endfor %}<|end|>"
)
TINY_CHAT_TEMPLATE = (
    "{% if tools %}<|tools|>\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}<|end|>\n"
    "{% endif %}{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['role'] == 'assistant' %}{% generation %}" + _TINY_TURN + "{% endgeneration %}"
    "{% else %}" + _TINY_TURN + "{% endif %}{{ '\\n' }}"  # a newline after a tag is trimmed
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

_CORPUS = (
    "You are an agent working on a task. Action: Operation\n```sql\nSELECT name, COUNT(*) "
    "FROM users WHERE age > 30 GROUP BY name ORDER BY name;\n```\nAction: Answer\nFinal Answer: "
    "[(1, 'a')] INSERT INTO orders (id, total) VALUES (1, 2.5); UPDATE items SET price = 3 "
    "WHERE id = 7; DELETE FROM logs; ls -la /home/user && cat file.txt | grep error; "
    "get_relations(m.0abc) get_neighbors(#0, people.person.nationality) intersection(#1, #2) "
    "The quick brown fox jumps over the lazy dog. 0123456789 OK. user assistant system"
)


def build_tiny_model(
    folder: str | Path,
    *,
    vocab_size: int = 500,
    hidden_size: int = 32,
    layers: int = 2,
    context_window: int = 4096,
    seed: int = 0,
) -> Path:
    """Write a random-weight Llama model and a freshly trained BPE tokenizer to `folder`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    specials = ["<|pad|>", "<|bos|>", "<|eos|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([_CORPUS] * 20, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<|pad|>", bos_token="<|bos|>", eos_token="<|eos|>"
    )
    fast.chat_template = TINY_CHAT_TEMPLATE
    fast.save_pretrained(folder)

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context_window,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
