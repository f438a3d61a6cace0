"""MJCF-v0 from Python: bring your own model, either physics backend."""
import os
from pathlib import Path

import numpy as np
import pytest

import myriad

SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODEL = SRC / "physics/models/hopper_chain.xml"


@pytest.mark.parametrize("physics", ["myriad", "mujoco"])
def test_mjcf_env_from_python(physics):
    env = myriad.make("MJCF-v0", num_envs=4, seed=0, xml=MODEL, physics=physics,
                      frame_skip=2, reset_noise_scale=0.05)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 12) and obs.dtype == np.float32
    assert env.single_action_space.shape == (3,)
    obs, reward, term, trunc, info = env.step(np.zeros((4, 3), np.float32))
    assert np.isfinite(obs).all() and (reward == 0).all() and not term.any()
    state = env.get_state()
    assert state.shape == (4, 1 + 6 + 6) and state.dtype == np.float64


def test_same_state_same_step_on_both_backends():
    a = myriad.make("MJCF-v0", num_envs=3, xml=MODEL, physics="myriad", precision=64)
    b = myriad.make("MJCF-v0", num_envs=3, xml=MODEL, physics="mujoco")
    state = np.zeros((3, 13))
    state[:, 1:7] = np.random.default_rng(0).normal(size=(3, 6)) * 0.3
    a.set_state(state)
    b.set_state(state)
    act = np.full((3, 3), 0.2, np.float32)
    for _ in range(20):
        a.step(act)
        b.step(act)
    np.testing.assert_allclose(a.get_state(), b.get_state(), atol=1e-9)


def test_mjcf_errors():
    with pytest.raises(ValueError, match="xml"):
        myriad.make("MJCF-v0", num_envs=2)
    with pytest.raises(ValueError, match="myriad, mujoco"):
        myriad.make("MJCF-v0", num_envs=2, xml=MODEL, physics="bullet")
