"""Writes test/fixtures/tiny-model/not-a-decoder.onnx: a valid ONNX graph (y = x + 1) without a decoder's inputs, so
the onnx backend's tests can check that loading a model with the wrong signature fails with a clear message.

    .venv/bin/python -m quarry_trainer.tiny_model.fixtures
"""

import os

import onnx
from onnx import TensorProto, helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def main():
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"])],
        "not_a_decoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        initializer=[one],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="quarry-fixtures")
    model.ir_version = 8
    onnx.checker.check_model(model)
    out = os.path.join(ROOT, "test", "fixtures", "tiny-model")
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "not-a-decoder.onnx"))


if __name__ == "__main__":
    main()
