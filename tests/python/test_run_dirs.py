"""myriad.train() never overwrites another run: the same protection as `myriad train --out`
(learner/run_dir.h), with overwrite=True for replacing one and run__resume for continuing in
place; load_policy refuses a damaged checkpoint by name."""
import pytest

import myriad

CONFIG = {"env": {"id": "CartPole-v1", "num_envs": 4, "device": "cpu"},
          "ppo": {"num_steps": 8, "num_minibatches": 2, "update_epochs": 1},
          "run": {"total_env_steps": 32, "eval_episodes": 0}}


def test_train_refuses_an_out_holding_a_run_unless_overwrite_or_resume(tmp_path):
    out = tmp_path / "run"
    myriad.train(CONFIG, out=out)
    with pytest.raises(FileExistsError, match="already holds a run"):
        myriad.train(CONFIG, out=out)
    myriad.train(CONFIG, out=out, overwrite=True)
    s = myriad.train(CONFIG, out=out, run__resume=str(out / "checkpoints/last.pt"),
                     run__total_env_steps=64)
    assert s["env_steps"] == 64
    assert len((out / "metrics.csv").read_text().splitlines()) == 3  # header, 32, 64


def test_default_out_names_are_unique(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        myriad.train(CONFIG)
    assert len(list((tmp_path / "runs").iterdir())) == 2


def test_load_policy_refuses_a_damaged_checkpoint_naming_it(tmp_path):
    out = tmp_path / "run"
    myriad.train(CONFIG, out=out)
    data = (out / "checkpoints/last.pt").read_bytes()
    bad = tmp_path / "bad.pt"
    bad.write_bytes(data[:-1000])
    with pytest.raises(ValueError, match="truncated") as e:
        myriad.load_policy(bad)
    assert str(bad) in str(e.value)
