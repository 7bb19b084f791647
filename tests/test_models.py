"""The networks: shapes, the compact Magic Vec, and what the export stores."""

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")

from messiah.features import SHAPE  # noqa: E402
from messiah.models.export import export_onnx  # noqa: E402
from messiah.models.net import AllMovesNet, NetConfig, ScalarNet  # noqa: E402
from messiah.moves import NUM_MOVE_INDICES, possible_indices  # noqa: E402

CFG = NetConfig(channels=8, blocks=2, head_channels=4, embed_dim=12)


def test_shapes():
    net = AllMovesNet(CFG)
    x = torch.randn(3, *SHAPE)
    h = net(x)
    assert h.shape == (3, 12)
    moves = torch.from_numpy(possible_indices()[:5]).repeat(3, 1)
    assert net.move_logits(h, moves).shape == (3, 5)
    assert net.move_logits(h, moves[:, 0]).shape == (3,)
    assert ScalarNet(CFG)(x).shape == (3,)


def test_move_logits_is_dot_product_plus_bias():
    torch.manual_seed(0)
    net = AllMovesNet(CFG)
    with torch.no_grad():
        net.bias.normal_()
    h = torch.randn(2, 12)
    idx = torch.tensor([[int(possible_indices()[7]), int(possible_indices()[100])]] * 2)
    z = net.move_logits(h, idx)
    for b in range(2):
        for m in range(2):
            row = int(net.row_of[idx[b, m]])
            expected = h[b] @ net.embedding[row] + net.bias[row]
            assert torch.allclose(z[b, m], expected, atol=1e-5)
    # 2-d and 1-d paths agree
    assert torch.allclose(net.move_logits(h, idx[:, 0]), z[:, 0], atol=1e-5)


def test_impossible_indices_read_the_zero_row():
    net = AllMovesNet(CFG)
    impossible = np.setdiff1d(np.arange(NUM_MOVE_INDICES), possible_indices())[:10]
    z = net.move_logits(torch.randn(1, 12), torch.from_numpy(impossible)[None])
    assert torch.all(z == 0)


def test_zero_embedding_option():
    net = AllMovesNet(CFG, zero_embedding=True)
    assert torch.all(net.embedding == 0)


def test_export_is_small_and_records_metadata(tmp_path):
    path = export_onnx(AllMovesNet(NetConfig()), tmp_path / "m.onnx", {"steps": 7})
    model = onnx.load(str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["messiah.kind"] == "all_moves" and meta["messiah.steps"] == "7"
    assert NetConfig.from_json(meta["messiah.config"]) == NetConfig()
    # the compact table: 3,813 rows + the zero row instead of 14,256
    assert path.stat().st_size < 10_000_000


def test_dueling_net_adds_its_value_head_and_exports_it(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    torch.manual_seed(0)
    net = AllMovesNet(NetConfig(channels=8, blocks=1, head_channels=4, embed_dim=12, value_hidden=6)).eval()
    x = torch.randn(2, *SHAPE)
    moves = torch.from_numpy(possible_indices()[:5]).repeat(2, 1)
    h = net(x)
    assert torch.equal(net.move_logits(h, moves), net.advantage_logits(h, moves))  # V starts at 0
    with torch.no_grad():
        net.value[2].weight.normal_()
        net.value[2].bias.fill_(0.5)
    v = net.state_logit(h)
    assert v.shape == (2,) and torch.all(v != 0)
    assert torch.allclose(net.move_logits(h, moves), net.advantage_logits(h, moves) + v[:, None])
    assert torch.allclose(net.move_logits(h, moves[:, 0]), net.move_logits(h, moves)[:, 0])
    path = export_onnx(net, tmp_path / "d.onnx")
    q = ort.InferenceSession(str(path)).run(None, {"features": x.numpy(), "moves": moves.numpy()})[0]
    assert np.allclose(q, torch.sigmoid(net.move_logits(h, moves)).detach().numpy(), atol=1e-5)
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert NetConfig.from_json(meta["messiah.config"]).value_hidden == 6


def test_export_leaves_the_module_in_its_mode(tmp_path):
    tiny = NetConfig(channels=8, blocks=1, head_channels=4, embed_dim=12)
    for training in (True, False):
        net = AllMovesNet(tiny).train(training)
        export_onnx(net, tmp_path / "m.onnx")
        assert net.training == training and all(m.training == training for m in net.modules())


def test_widen_keeps_the_function_and_its_new_channels_learn():
    from messiah.models.from_onnx import calibration_positions
    from messiah.models.widen import widen

    torch.manual_seed(1)
    narrow = AllMovesNet(CFG)
    narrow.train()
    with torch.no_grad():  # batch norms with trained-looking statistics
        for p in narrow.parameters():
            p.add_(0.1 * torch.randn_like(p))
        narrow(torch.from_numpy(calibration_positions(64, seed=2)))
    narrow.eval()
    wide = widen(narrow, 16).eval()
    assert wide.config.channels == 16 and wide.backbone.blocks[0].a[0].weight.shape == (16, 16, 3, 3)
    x = torch.from_numpy(calibration_positions(32, seed=3))
    moves = torch.from_numpy(possible_indices()[:40]).repeat(32, 1)
    with torch.no_grad():
        z_narrow = narrow.move_logits(narrow(x), moves)
        z_wide = wide.move_logits(wide(x), moves)
    assert z_narrow.abs().max() > 0.1  # not a trivially zero net
    torch.testing.assert_close(z_wide, z_narrow, atol=1e-5, rtol=1e-5)
    # the new channels are live below, and the zero weights that read them get gradients at once
    assert wide.backbone.stem(x)[:, 8:].abs().sum() > 0
    wide.train()
    wide.move_logits(wide(x), moves).square().mean().backward()
    reads_new = wide.backbone.head[0].weight.grad[:, 8:]
    assert torch.all(wide.backbone.head[0].weight[:, 8:] == 0) and reads_new.abs().sum() > 0


def test_widen_refuses_to_narrow():
    from messiah.models.widen import widen

    with pytest.raises(ValueError, match="cannot widen"):
        widen(AllMovesNet(CFG), 4)
