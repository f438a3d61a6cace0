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


BALL = """<mujoco model="ball">
  <worldbody>
    <body name="ball" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="sphere" pos="0.3 0 0" size="0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("physics", ["myriad", "mujoco"])
def test_model_without_actuators_simulates_and_train_refuses_it(tmp_path, physics):
    path = tmp_path / "ball.xml"
    path.write_text(BALL)
    env = myriad.make("MJCF-v0", num_envs=2, seed=0, xml=str(path), physics=physics)
    assert env.single_action_space.shape == (0,)
    env.reset(seed=0)
    obs, reward, term, trunc, _ = env.step(np.zeros((2, 0), np.float32))
    assert obs.shape == (2, 2) and np.isfinite(obs).all()
    # Issue 34: train refused it with SIGFPE; now at config time, before a run folder exists.
    with pytest.raises(ValueError, match=r"ball\.xml' \(env\.xml\) has no actuators"):
        myriad.train({"env": {"id": "MJCF-v0", "num_envs": 2, "physics": physics,
                              "xml": str(path)}, "run": {"total_env_steps": 64}},
                     out=str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("physics", ["myriad", "mujoco"])
def test_model_numbers_are_checked_at_import(tmp_path, physics):
    # Issue 34: libmujoco 2.2.2 read pos="nan 0 1" as the origin, warning only.
    path = tmp_path / "ball.xml"
    path.write_text(BALL.replace('pos="0 0 1"', 'pos="nan 0 1"'))
    with pytest.raises(ValueError, match=r"body 'ball' \(line 3\): pos = \"nan 0 1\" is not finite"):
        myriad.make("MJCF-v0", num_envs=2, xml=str(path), physics=physics)
    path.write_text(BALL.replace("<worldbody>", '<option timestep="-0.01"/><worldbody>'))
    with pytest.raises(ValueError, match=r"option: timestep = \"-0.01\" is out of range"):
        myriad.make("MJCF-v0", num_envs=2, xml=str(path), physics=physics)


def test_randomize_terms_from_a_dict():
    """randomize= takes mjlab-style terms as a dict; the same seed draws the same models."""
    terms = {"friction": {"field": "geom_friction", "axes": [0], "range": [0.5, 1.5]},
             "mass": {"field": "body_mass", "operation": "scale", "range": [0.8, 1.2]}}
    envs = [myriad.make("MJCF-v0", num_envs=4, seed=3, xml=MODEL, randomize=terms)
            for _ in range(2)]
    act = np.full((4, 3), 0.3, np.float32)
    for env in envs:
        env.reset(seed=3)
        for _ in range(30):
            env.step(act)
    np.testing.assert_array_equal(envs[0].get_state(), envs[1].get_state())
    # Different models per env: the same action from the same state moves the envs apart.
    state = envs[0].get_state()
    assert np.ptp(state[:, 1:], axis=0).max() > 1e-6
    with pytest.raises(ValueError, match=r"randomize\.mass\.range: the range is inverted"):
        myriad.make("MJCF-v0", xml=MODEL,
                    randomize={"mass": {"field": "body_mass", "range": [2.0, 1.0]}})
    with pytest.raises(ValueError, match="finite"):
        myriad.make("MJCF-v0", xml=MODEL,
                    randomize={"mass": {"field": "body_mass", "range": [1.0, float("inf")]}})
