"""Replays from Python: Policy.record writes a file that myriad.load_replay reads back into numpy
arrays that agree with the policy's own evaluation; bad files raise ReplayError naming why."""
import struct
import zlib

import numpy as np
import pytest

import myriad


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    myriad.train({"env": {"id": "CartPole-v1", "num_envs": 8, "device": "cpu"},
                  "ppo": {"num_steps": 32},
                  "run": {"total_env_steps": 4096, "eval_episodes": 0}}, out=out)
    return out / "checkpoints" / "last.pt"


@pytest.fixture(scope="module")
def recorded(checkpoint, tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "cartpole.replay"
    stats = myriad.load_policy(checkpoint).record(path, envs=3, episodes=2, seed=11)
    return path, stats


def test_record_and_load(recorded, checkpoint):
    path, stats = recorded
    r = myriad.load_replay(path)
    assert r.header["env"] == "CartPole-v1" and r.num_envs == 3
    F = r.header["num_frames"]
    assert r.body_pose.shape == (3, F, 3, 7) and r.body_pose.dtype == np.float32
    assert r.reward.shape == r.value.shape == r.flags.shape == (3, F)
    assert r.action.shape == (3, F, 1)
    assert r.header["checkpoint"] == str(checkpoint)
    assert r.header["frame_dt"] == pytest.approx(0.02)
    assert [g["name"] for g in r.scene["geoms"]][-2:] == ["cart", "pole"]
    returns = []
    for env in range(3):
        episodes = r.episodes(env)
        assert len(episodes) == 2
        for first, last in episodes:
            returns.append(r.reward[env, first:last + 1].sum())
            assert np.isnan(r.action[env, last, 0]) and not np.isnan(r.action[env, first, 0])
            assert np.all(np.isfinite(r.value[env, first:last + 1]))
    assert stats["episodes"] == 6
    assert np.mean(returns) == pytest.approx(stats["return_mean"], rel=1e-5)
    assert np.allclose(np.linalg.norm(r.body_pose[..., 3:], axis=-1), 1, atol=1e-5)


def test_cart_moves_with_the_state(recorded):
    r = myriad.load_replay(recorded[0])
    first, last = r.episodes(0)[0]
    cart_x = r.body_pose[0, first:last + 1, 1, 0]
    assert np.ptp(cart_x) > 0, "the cart never moved"


def rewrite(data, **fields):
    """The file with some prefix fields replaced (magic, major, minor, header_len, payload_len)."""
    magic, major, minor, hlen, plen = struct.unpack_from("<8sHHIQ", data)
    values = {**dict(magic=magic, major=major, minor=minor, hlen=hlen, plen=plen), **fields}
    return struct.pack("<8sHHIQ", values["magic"], values["major"], values["minor"],
                       values["hlen"], values["plen"]) + data[24:]


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[:len(d) // 2], "truncated"),
    (lambda d: d[:20], "truncated"),
    (lambda d: b"PK\x03\x04" + d[4:], "not a Myriad replay"),
    (lambda d: rewrite(d, major=2, minor=0), "replay format 2.0 is newer than this reader"),
    (lambda d: d[:-40] + bytes(b ^ 0xFF for b in d[-40:-8]) + d[-8:], "corrupt"),
    (lambda d: d + b"\0" * 3, "3 bytes after the payload"),
])
def test_bad_files_raise_replay_error(recorded, tmp_path, damage, message):
    bad = tmp_path / "bad.replay"
    bad.write_bytes(damage(recorded[0].read_bytes()))
    with pytest.raises(myriad.ReplayError, match=message):
        myriad.load_replay(bad)


def test_newer_minor_version_and_extra_keys_still_read(recorded, tmp_path):
    data = rewrite(recorded[0].read_bytes(), minor=7)
    (tmp_path / "minor.replay").write_bytes(data)
    assert myriad.load_replay(tmp_path / "minor.replay").num_envs == 3


def test_missing_file_and_bad_arguments(checkpoint, tmp_path):
    with pytest.raises(FileNotFoundError):
        myriad.load_replay(tmp_path / "nope.replay")
    with pytest.raises(ValueError, match="envs and episodes must be positive"):
        myriad.load_policy(checkpoint).record(tmp_path / "x.replay", envs=0)


def test_payload_is_zlib_of_the_arrays(recorded):
    data = recorded[0].read_bytes()
    _, _, _, hlen, plen = struct.unpack_from("<8sHHIQ", data)
    assert len(data) == 24 + hlen + plen
    zlib.decompress(data[24 + hlen:])  # what the browser's DecompressionStream("deflate") reads


def test_record_any_python_policy(tmp_path):
    """A scripted controller (no checkpoint) records through the same recorder."""
    envs = myriad.make("CartPole-v1", num_envs=2, device="cpu", seed=0)

    def push_toward_the_lean(obs):
        return (obs[:, 2] > 0).astype(np.int64)

    stats = myriad.record(envs, push_toward_the_lean, tmp_path / "s.replay", episodes=2,
                          value=lambda obs: np.full(len(obs), 3.5), seed=4)
    r = myriad.load_replay(tmp_path / "s.replay")
    assert stats["episodes"] == 4 and r.num_envs == 2
    first, last = r.episodes(0)[0]
    assert np.all(r.value[0, first:last + 1] == 3.5)
    assert r.header["checkpoint"] == "" and r.header["seed"] == 4
    # The recorded actions are the controller's.
    obs_theta = 2 * np.arctan2(r.body_pose[0, first:last, 2, 5], r.body_pose[0, first:last, 2, 3])
    np.testing.assert_array_equal(r.action[0, first:last, 0], (obs_theta > 0).astype(np.float32))
    # Without a value function the column is NaN; bad outputs are clear errors.
    myriad.record(envs, push_toward_the_lean, tmp_path / "n.replay")
    assert np.isnan(myriad.load_replay(tmp_path / "n.replay").value).all()
    with pytest.raises(ValueError, match="expected 2 value estimates per step, got 3"):
        myriad.record(envs, push_toward_the_lean, tmp_path / "x.replay",
                      value=lambda obs: np.zeros(3))
    with pytest.raises(ValueError, match="episodes must be positive"):
        myriad.record(envs, push_toward_the_lean, tmp_path / "x.replay", episodes=0)


def with_header(data, edit):
    """The file with its JSON header changed by edit(header) (lengths fixed up)."""
    import json
    _, major, minor, hlen, plen = struct.unpack_from("<8sHHIQ", data)
    header = json.loads(data[24:24 + hlen])
    edit(header)
    text = json.dumps(header).encode()
    return struct.pack("<8sHHIQ", b"MYRIADRP", major, minor, len(text), plen) + text + \
        data[24 + hlen:]


def set_shape(header, shape):
    header["arrays"]["reward"]["shape"] = shape


@pytest.mark.parametrize("edit, message", [
    (lambda h: h.update(payload_bytes=2**40), "cannot come from"),
    (lambda h: set_shape(h, [2**32, 2**32]), "larger than the"),
    (lambda h: set_shape(h, [2**70]), "not an integer in 0..2"),
    (lambda h: set_shape(h, "23"), "not a list"),
    (lambda h: h.update(payload_bytes=float("1e300")), "not an integer"),
    (lambda h: h.update(payload_bytes=True), "not an integer"),
    (lambda h: h["arrays"]["reward"].update(shuffle=1), "not true or false"),
    (lambda h: h["arrays"]["reward"].update(offset=h["arrays"]["value"]["offset"]), "overlap"),
    (lambda h: h["arrays"].pop("flags"), "array 'flags' is missing"),
    (lambda h: h.update(num_envs=4), "header num_envs says M = 4"),
    (lambda h: h["scene"]["bodies"].append("x"), "body_pose has 3 bodies, the scene 4"),
    (lambda h: h.update(arrays=[]), "corrupt replay header"),
    (lambda h: h.update(format="something-else"), "not a Myriad replay"),
])
def test_hostile_headers_are_refused(recorded, tmp_path, edit, message):
    bad = tmp_path / "bad.replay"
    bad.write_bytes(with_header(recorded[0].read_bytes(), edit))
    with pytest.raises(myriad.ReplayError, match=message):
        myriad.load_replay(bad)


def test_bytes_after_the_zlib_stream_inside_the_payload_are_corrupt(recorded, tmp_path):
    data = recorded[0].read_bytes()
    _, major, minor, hlen, plen = struct.unpack_from("<8sHHIQ", data)
    padded = struct.pack("<8sHHIQ", b"MYRIADRP", major, minor, hlen, plen + 2) + data[24:] + b"xx"
    (tmp_path / "p.replay").write_bytes(padded)
    with pytest.raises(myriad.ReplayError, match="corrupt replay payload"):
        myriad.load_replay(tmp_path / "p.replay")


def with_header_text(data, text):
    _, major, minor, hlen, plen = struct.unpack_from("<8sHHIQ", data)
    return struct.pack("<8sHHIQ", b"MYRIADRP", major, minor, len(text), plen) + text + \
        data[24 + hlen:]


@pytest.mark.parametrize("tail, message", [
    (b'"x": ' + b"[" * 100000 + b"}", "nested deeper than 64 levels"),  # was RecursionError
    (b'"x": 1e400}', "number overflow"),
    (b'"payload_bytes": 1e300}', "duplicate key"),  # the last one won
    (b'"x": ' + b"9" * 5000 + b"}", "number overflow"),
    (b'"x": NaN}', "not JSON"),
    (b'"x": "\\ud800"}', "surrogate"),
    (b'"env": 1}', "duplicate key"),
])
def test_json_the_cpp_reader_refuses_is_refused_as_replay_error(recorded, tmp_path, tail, message):
    data = recorded[0].read_bytes()
    hlen = struct.unpack_from("<I", data, 12)[0]
    text = data[24:24 + hlen][:-1] + b", " + tail
    (tmp_path / "j.replay").write_bytes(with_header_text(data, text))
    with pytest.raises(myriad.ReplayError, match=message):
        myriad.load_replay(tmp_path / "j.replay")


def test_lying_payload_bytes_allocates_only_what_the_stream_holds(recorded, tmp_path):
    """payload_bytes up to ~1032x the compressed size passes the header check; the inflater's
    output grows with the stream and stops one byte past payload_bytes."""
    import tracemalloc
    data = recorded[0].read_bytes()
    plen = struct.unpack_from("<Q", data, 16)[0]
    lying = with_header(data, lambda h: h.update(payload_bytes=plen * 1032))
    tracemalloc.start()
    try:
        with pytest.raises(myriad.ReplayError, match="decompresses to"):
            myriad.replay.decode_replay(lying)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(data) + (4 << 20), peak
