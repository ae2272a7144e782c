"""TRL's SFTTrainer trains two steps on a ``--format trl --target qwen2.5-vl`` export of the samples, as it is: the
dataset loaded with ``datasets``, a tiny random-weight Qwen2.5-VL and its processor built here (tests/tiny_qwen_vl.py),
TRL's own vision collator (no custom one) and the processor's own image handling. Needs ``bash
infra/train/install.sh`` (trl 1.16.0); skips without trl."""

from __future__ import annotations

import math

import pytest
from screenmill.pipelines.export import main as export_main

from tests import tiny_qwen_vl
from tests.stages.export.sample_root import sample_root

trl = pytest.importorskip("trl", reason="trl is not installed: bash infra/train/install.sh")
datasets = pytest.importorskip("datasets")


def test_sft_trainer_runs_two_steps_on_a_trl_export(tmp_path, offline):
    out = tmp_path / "out"
    sample_root(out, limit=2, per_image=2)
    dest = tmp_path / "trl"
    assert export_main([str(out), "--format", "trl", "--target", "qwen2.5-vl", "--local-dir", str(dest),
                        "--test-fraction", "0"]) == 0  # fmt: skip
    train = datasets.load_dataset(str(dest), split="train", cache_dir=offline)
    assert len(train) >= 2 and train.features["images"].feature.__class__.__name__ == "Image"

    processor = tiny_qwen_vl.processor()
    model = tiny_qwen_vl.model(processor.tokenizer)
    args = trl.SFTConfig(
        output_dir=str(tmp_path / "run"),
        max_steps=2,
        per_device_train_batch_size=2,
        learning_rate=1e-3,
        bf16=False,  # TRL's defaults (bf16, gradient checkpointing) are ~4x slower on CPU
        gradient_checkpointing=False,
        max_length=None,  # never cut an image's placeholder tokens
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        dataloader_num_workers=0,
    )
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=train, processing_class=processor)
    assert type(trainer.data_collator).__module__.startswith("trl.")  # TRL's own collator
    batch = trainer.data_collator([train[0], train[1]])
    pads = (batch["input_ids"] == model.config.image_token_id).sum().item()
    grid = batch["image_grid_thw"]  # the processor resized the exported images itself
    assert pads == int((grid.prod(-1) // 4).sum()) > 0 and batch["pixel_values"].shape[0] == int(grid.prod(-1).sum())
    result = trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert trainer.state.global_step == 2 and len(losses) == 2
    assert all(math.isfinite(v) for v in losses) and math.isfinite(result.training_loss)
