"""Bad input to the Python API is refused with a clear error, never wrapped, truncated, dropped
or rewarded: seeds, sizes, actions, calls while a step is pending, config files."""

import numpy as np
import pytest

import myriad


@pytest.mark.parametrize("seed", [-1, 2**63, 2**64, -(2**63)])
def test_seeds_outside_0_to_2_63_are_refused_not_wrapped(seed):
    with pytest.raises(ValueError, match=r"\[0, 2\*\*63-1\]"):
        myriad.make("CartPole-v1", num_envs=2, seed=seed)
    env = myriad.make("CartPole-v1", num_envs=2, seed=0)
    with pytest.raises(ValueError, match=r"\[0, 2\*\*63-1\]"):
        env.reset(seed=seed)


@pytest.mark.parametrize("seed", [2.5, "3", True])
def test_seeds_that_are_not_integers_are_refused(seed):
    with pytest.raises(TypeError, match="seed must be an integer"):
        myriad.make("CartPole-v1", num_envs=2, seed=seed)


def test_largest_seed_round_trips():
    env = myriad.make("CartPole-v1", num_envs=2, seed=2**63 - 1)
    env.reset(seed=np.int64(2**63 - 1))
    env.step(np.zeros(2, np.int64))


def test_num_envs_must_be_an_integer():
    with pytest.raises(TypeError):
        myriad.make("CartPole-v1", num_envs=2.5)


@pytest.mark.parametrize("num_envs", [10**9, 2**31])
def test_sizes_beyond_memory_are_refused_before_allocation(num_envs):
    with pytest.raises(ValueError, match="bytes"):
        myriad.make("CartPole-v1", num_envs=num_envs)


def test_sizes_beyond_the_index_range_are_refused():
    with pytest.raises(ValueError, match="2\\^31"):
        myriad.make("CartPole-v1", num_envs=2**31 + 1)


@pytest.mark.parametrize("dtype,value", [(np.int64, 2**32), (np.int64, -1), (np.uint8, 2),
                                         (np.int16, -1), (np.uint64, 2**64 - 1)])
def test_out_of_range_discrete_actions_are_refused_in_every_width(dtype, value):
    env = myriad.make("CartPole-v1", num_envs=3, seed=0)
    actions = np.zeros(3, dtype)
    actions[1] = value
    with pytest.raises(ValueError, match=f"action {value} of env 1"):
        env.step(actions)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_continuous_actions_are_refused_not_rewarded(bad):
    env = myriad.make("Pendulum-v1", num_envs=3, seed=0)
    env.reset(seed=0)
    before = np.array(env.get_state())
    actions = np.zeros((3, 1), np.float32)
    actions[2, 0] = bad
    with pytest.raises(ValueError, match="of env 2 is not finite"):
        env.step(actions)
    np.testing.assert_array_equal(before, np.array(env.get_state()))


def test_step_async_twice_is_an_error_and_the_first_step_is_kept():
    env = myriad.make("CartPole-v1", num_envs=2, seed=0)
    env.step_async(np.ones(2, np.int64))
    with pytest.raises(RuntimeError, match="step_wait"):
        env.step_async(np.zeros(2, np.int64))
    env.step_wait()


def test_duplicate_config_keys_are_an_error(tmp_path):
    config = tmp_path / "dup.yaml"
    config.write_text("env: {id: CartPole-v1}\nppo:\n  gamma: 0.9\n  gamma: 0.5\n")
    with pytest.raises(ValueError, match="ppo.gamma.*twice"):
        myriad.train(str(config), out=str(tmp_path / "run"))


def test_minibatches_of_one_sample_are_refused(tmp_path):
    with pytest.raises(ValueError, match="ppo.num_minibatches"):
        myriad.train({"env": {"id": "CartPole-v1", "num_envs": 2},
                      "ppo": {"num_steps": 1, "num_minibatches": 2}}, out=str(tmp_path / "run"))
