"""`model/__init__.py` is the one public face: every name it promises resolves to the real object."""
import importlib

import model


def test_every_public_name_resolves_to_its_defining_module():
    for name in model.__all__:
        value = getattr(model, name)
        assert value is not None, name
        if name in model._LAZY:
            assert value is getattr(importlib.import_module(model._LAZY[name]), name)


def test_the_face_names_what_the_readme_promises():
    promised = {"load_checkpoint", "save_checkpoint", "load_pretrained", "record", "intervene", "logit_lens",
                "attribute", "compute_frame", "Transformer", "TransformerConfig", "Trainer"}
    assert promised <= set(model.__all__)


def test_an_unknown_name_is_an_attribute_error():
    try:
        model.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("model.no_such_name resolved")
