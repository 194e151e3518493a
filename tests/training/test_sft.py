"""Supervised training on demonstrations with TRL, on the tiny model: the loss is the
assistant's alone, and training lowers it on the demonstrations."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("trl", reason="SFT needs TRL: pip install 'lifelong-gym[trl]'")
datasets = pytest.importorskip("datasets", reason="SFT needs datasets")

from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402

from lifelong_gym.training import demonstrations  # noqa: E402
from lifelong_gym.training.chat_templates import training_chat_template  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    """Eight short DB demonstrations (an UPDATE and a DELETE among them)."""
    chosen = [0, 2, 3, 4, 5, 6, 7, 8]
    return [d.row() for d in demonstrations("LifelongDB-v0", task_indices=chosen)]


def trainer_for(folder, rows, tmp_path, **options) -> SFTTrainer:
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = training_chat_template(tokenizer)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    dataset = datasets.Dataset.from_list([{"messages": r["messages"]} for r in rows])
    args = SFTConfig(
        output_dir=str(tmp_path / "trainer"),
        assistant_only_loss=True,
        use_cpu=True,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        per_device_train_batch_size=1,
        per_device_eval_batch_size=1,
        logging_steps=1,
        max_length=4096,  # the tiny model's window; its small vocabulary makes long episodes
        seed=0,
        **options,
    )
    return SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        eval_dataset=dataset,
        processing_class=tokenizer,
    )


def test_the_labels_are_the_assistants_tokens_and_nothing_else(tiny_model_dir, rows, tmp_path):
    trainer = trainer_for(tiny_model_dir, rows, tmp_path)
    tokenizer = trainer.processing_class
    end = tokenizer.encode("<|end|>")
    prepared = trainer.train_dataset
    for row, example in zip(rows, prepared, strict=True):
        ids, labels = example["input_ids"], example["labels"]
        assert ids == tokenizer.apply_chat_template(row["messages"], tokenize=True)["input_ids"]
        kept = [token for token, label in zip(ids, labels, strict=True) if label != -100]
        assert all(label in (-100, token) for token, label in zip(ids, labels, strict=True))
        replies = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        expected = [t for reply in replies for t in tokenizer.encode(reply) + end]
        assert tokenizer.decode(kept) == tokenizer.decode(expected)
        assert len(kept) < len(ids) / 2  # the instructions, task and observations are not in it


def test_the_loss_is_the_mean_over_the_assistants_tokens(tiny_model_dir, rows, tmp_path):
    trainer = trainer_for(tiny_model_dir, rows[:2], tmp_path)
    model = trainer.model.eval()
    batch = trainer.data_collator([trainer.train_dataset[0]])
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(batch))
        logits = model(input_ids=batch["input_ids"]).logits[0, :-1]
        targets = batch["labels"][0, 1:]
        assistant = targets != -100
        manual = torch.nn.functional.cross_entropy(logits[assistant], targets[assistant])
        # a different text at every other position changes nothing of the loss's targets
        everything = torch.nn.functional.cross_entropy(logits, batch["input_ids"][0, 1:])
    assert loss.item() == pytest.approx(manual.item(), rel=1e-5)
    assert abs(everything.item() - manual.item()) > 1e-3


def test_sft_on_a_handful_of_demonstrations_lowers_the_loss_on_them(tiny_model_dir, rows, tmp_path):
    trainer = trainer_for(
        tiny_model_dir, rows, tmp_path, num_train_epochs=6, learning_rate=3e-3, warmup_steps=0
    )
    before = trainer.evaluate()["eval_loss"]
    trainer.train()
    after = trainer.evaluate()["eval_loss"]
    assert after < 0.8 * before, (before, after)
