"""Myriad's own spaces (used when gymnasium is not installed) and the CUDA path of the vector
env (skipped where no GPU answers; scripts/gpu-check.sh runs it on a GPU host)."""
import numpy as np
import pytest

import myriad
from myriad import spaces


def test_own_spaces_behave_like_gymnasiums(monkeypatch):
    monkeypatch.setattr(spaces, "_gymnasium_spaces", lambda: None)
    env = myriad.make("Pendulum-v1", num_envs=3, seed=0)
    box = spaces.make_space(env.spec["observation_space"])
    assert isinstance(box, spaces.Box) and box.shape == (3,) and box.dtype == np.float32
    box.seed(1)
    x = box.sample()
    assert box.contains(x) and x in box and not box.contains(x + 100)
    disc = spaces.make_space(myriad.make("CartPole-v1").spec["action_space"])
    assert isinstance(disc, spaces.Discrete) and disc.n == 2
    disc.seed(2)
    assert all(disc.contains(disc.sample()) for _ in range(20)) and not disc.contains(2)
    batched = spaces.batch_space(disc, 5)
    assert batched.shape == (5,) and batched.contains(batched.sample())
    assert spaces.batch_space(box, 4).shape == (4, 3)


@pytest.mark.skipif(not myriad.cuda_available(), reason="no CUDA GPU on this machine")
def test_cuda_env_returns_gpu_tensors_that_agree_with_cpu():
    import torch

    cpu = myriad.make("CartPole-v1", num_envs=1024, device="cpu", seed=5)
    gpu = myriad.make("CartPole-v1", num_envs=1024, device="cuda", seed=5)
    obs_gpu, _ = gpu.reset(seed=5)
    obs_cpu, _ = cpu.reset(seed=5)
    assert isinstance(obs_gpu, torch.Tensor) and obs_gpu.is_cuda
    actions = torch.randint(0, 2, (1024,), dtype=torch.int32)
    o_cpu = cpu.step(actions.numpy())[0]
    o_gpu = gpu.step(actions.cuda())[0]
    np.testing.assert_allclose(o_gpu.cpu().numpy(), o_cpu, rtol=1e-4, atol=1e-5)
    assert gpu.get_state().is_cuda
