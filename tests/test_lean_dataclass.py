"""rigcheck.core.lean_dataclass behaves as the standard ``@dataclass``: each case defines the same class with
both decorators and compares what they do."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any, ClassVar

import pytest

from rigcheck.core import lean_dataclass

DECORATORS = {"stdlib": dataclasses.dataclass, "lean": lean_dataclass.dataclass}


def both(make: Any) -> tuple[Any, Any]:
    """The class ``make(decorator)`` builds, with the standard decorator and with the lean one."""
    return make(DECORATORS["stdlib"]), make(DECORATORS["lean"])


def point(dataclass: Any, **options: Any) -> Any:
    @dataclass(**options)
    class Point:
        """A point."""

        x: float
        y: float = 0.0
        label: str = dataclasses.field(default="", compare=False)
        secret: str = dataclasses.field(default="", repr=False)
        kind: ClassVar[str] = "point"

    return Point


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True}])
def test_equality_hash_and_repr_match_the_standard_decorator(options: dict[str, Any]) -> None:
    standard, lean = both(lambda d: point(d, **options))
    pairs = [((1.0, 2.0), (1.0, 2.0)), ((1.0, 2.0), (1.0, 3.0)), ((float("nan"), 0.0), (float("nan"), 0.0))]
    for left, right in pairs:
        for label in ("", "a"):
            a, b = standard(*left, label=label, secret="s"), standard(*right)
            c, d = lean(*left, label=label, secret="s"), lean(*right)
            assert (a == b) == (c == d)  # label is compare=False: it never makes two points differ
            assert (a != b) == (c != d)
            assert repr(c) == repr(a).replace(standard.__qualname__, lean.__qualname__)
    nan = float("nan")
    same, other = lean(nan), standard(nan)
    assert same == same and other == other  # one NaN object: tuples compare items by identity first
    assert lean(nan) == lean(nan) and standard(nan) == standard(nan)  # the same float object, twice
    assert lean(float("nan")) != lean(float("nan")) and standard(float("nan")) != standard(float("nan"))
    assert repr(lean(1.5, label="a", secret="hidden")).endswith("Point(x=1.5, y=0.0, label='a')")
    if options.get("frozen"):
        assert hash(lean(1.0, 2.0, label="x")) == hash(lean(1.0, 2.0, label="y"))  # label is not hashed
        assert hash(lean(1.0, 2.0)) == hash((1.0, 2.0, ""))  # the compared fields' tuple, as generated
        assert hash(standard(1.0, 2.0)) == hash((1.0, 2.0, ""))
        assert len({lean(1.0), lean(1.0), lean(2.0)}) == 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            lean(1.0).x = 2.0  # type: ignore[misc]
    else:  # eq without frozen: unhashable, as the standard decorator makes it
        assert standard.__hash__ is None and lean.__hash__ is None
        with pytest.raises(TypeError):
            hash(lean(1.0))


def test_the_repr_is_the_standard_one_and_a_cycle_shows_as_dots() -> None:
    @lean_dataclass.dataclass
    class Node:
        name: str
        children: list[Any] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass
    class Standard:
        name: str
        children: list[Any] = dataclasses.field(default_factory=list)

    root, standard = Node("root"), Standard("root")
    root.children.append(root)
    standard.children.append(standard)
    assert repr(root).split("(", 1)[1] == repr(standard).split("(", 1)[1] == "name='root', children=[...])"
    assert repr(Node("leaf")).endswith("Node(name='leaf', children=[])")


def test_a_different_class_is_not_equal_and_other_operands_get_their_turn() -> None:
    standard, lean = both(lambda d: point(d, frozen=True))
    assert lean(1.0) != standard(1.0)
    assert lean(1.0).__eq__(standard(1.0)) is NotImplemented
    assert lean(1.0).__eq__((1.0, 0.0)) is NotImplemented

    class Anything:
        def __eq__(self, other: object) -> bool:
            return True

    assert lean(1.0) == Anything()  # NotImplemented hands the comparison to the other side


def test_methods_the_class_defines_are_kept() -> None:
    @lean_dataclass.dataclass(frozen=True)
    class Own:
        value: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Own) and other.value % 10 == self.value % 10

        def __hash__(self) -> int:
            return self.value % 10

        def __repr__(self) -> str:
            return f"<own {self.value}>"

    assert Own(3) == Own(13) and hash(Own(13)) == 3 and repr(Own(3)) == "<own 3>"

    @lean_dataclass.dataclass(frozen=True)
    class EqOnly:  # a body __eq__ without __hash__: the standard decorator adds a field hash
        value: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, EqOnly) and other.value == self.value

    assert hash(EqOnly(5)) == hash((5,))


def test_eq_false_and_repr_false_are_honoured() -> None:
    @lean_dataclass.dataclass(frozen=True, eq=False, repr=False)
    class Plain:
        value: int

    a, b = Plain(1), Plain(1)
    assert a != b and a == a  # identity, as object's
    assert hash(a) == object.__hash__(a)
    assert repr(a).startswith("<") and "Plain object at" in repr(a)


def test_field_hash_overrides_compare() -> None:
    @lean_dataclass.dataclass(frozen=True)
    class Tagged:
        value: int
        tag: str = dataclasses.field(default="", hash=False)

    assert Tagged(1, "a") != Tagged(1, "b")  # compared
    assert hash(Tagged(1, "a")) == hash(Tagged(1, "b")) == hash((1,))  # not hashed


def test_dataclass_helpers_inheritance_and_pickling_work() -> None:
    @lean_dataclass.dataclass(frozen=True)
    class Base:
        a: int
        b: int = 2

    @lean_dataclass.dataclass(frozen=True)
    class Child(Base):
        c: int = 3

    child = Child(1)
    assert dataclasses.is_dataclass(child)
    assert [f.name for f in dataclasses.fields(child)] == ["a", "b", "c"]
    assert dataclasses.asdict(child) == {"a": 1, "b": 2, "c": 3}
    assert dataclasses.replace(child, c=4) == Child(1, 2, 4)
    assert Child(1) != Base(1)  # the class is part of equality, as generated
    assert repr(child).endswith("Child(a=1, b=2, c=3)")
    assert Child.__match_args__ == ("a", "b", "c")


@lean_dataclass.dataclass(frozen=True, slots=True)
class Pickled:
    name: str
    size: int = 0


def test_instances_pickle_and_compare_after_the_round_trip() -> None:
    value = Pickled("x", 3)
    again = pickle.loads(pickle.dumps(value))
    assert again == value and hash(again) == hash(value) and again is not value
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.size = 4  # type: ignore[misc]


def test_order_and_unsafe_hash_go_to_the_standard_decorator() -> None:
    @lean_dataclass.dataclass(order=True)
    class Ranked:
        score: int

    assert Ranked(1) < Ranked(2) and Ranked(2) == Ranked(2)

    @lean_dataclass.dataclass(unsafe_hash=True)
    class Hashed:
        value: int

    assert hash(Hashed(1)) == hash((1,))


def _frozen_pair(dataclass: Any) -> Any:
    @dataclass(frozen=True)
    class Frozen:
        value: int

    return Frozen


@pytest.mark.parametrize("helper_known", [True, False])
def test_frozen_instances_refuse_changes_as_the_standard_ones_do(monkeypatch, helper_known: bool) -> None:  # type: ignore[no-untyped-def]
    if not helper_known:  # another Python's dataclasses: the standard decorator compiles the two methods
        monkeypatch.setattr(lean_dataclass, "_GENERATE_FROZEN", None)
    before = getattr(dataclasses, "_frozen_get_del_attr", None)
    standard, lean = both(_frozen_pair)
    assert getattr(dataclasses, "_frozen_get_del_attr", None) is before  # the helper is put back
    closures = lean.__setattr__.__code__.co_filename == lean_dataclass.__file__
    assert closures is (lean_dataclass._GENERATE_FROZEN is not None)  # not compiled where the helper is known
    for cls in (standard, lean):
        item = cls(1)
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'value'"):
            item.value = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'value'"):
            del item.value
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
            item.other = 3  # any attribute of the frozen class itself
        assert item.value == 1 and dataclasses.replace(item, value=5).value == 5

    class Loose(lean):  # type: ignore[misc, valid-type]  # a plain subclass may add attributes, as with the standard one
        pass

    loose = Loose(1)
    loose.note = "x"
    assert loose.note == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        loose.value = 2


class _Checked:
    """A data descriptor: what a field assigned through it must still go through."""

    def __set_name__(self, owner: Any, name: str) -> None:
        self.name = f"_{name}"

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return 0 if instance is None else instance.__dict__.get(self.name, 0)

    def __set__(self, instance: Any, value: Any) -> None:
        instance.__dict__[self.name] = abs(value)


@pytest.mark.parametrize("helper_known", [True, False])
def test_a_frozen_init_stores_what_the_standard_one_stores(monkeypatch, helper_known: bool) -> None:  # type: ignore[no-untyped-def]
    """A frozen class's ``__init__`` writes its fields straight into the instance's ``__dict__``: the same
    instance as the standard one makes (defaults, factories, ``__post_init__``, a field named ``self``,
    inherited fields); a field behind a data descriptor, and a class with slots, keep the standard
    ``object.__setattr__``."""
    if not helper_known:
        monkeypatch.setattr(lean_dataclass, "_FIELD_ASSIGN", None)
    before = dataclasses._field_assign  # type: ignore[attr-defined]

    def make(dataclass: Any) -> tuple[Any, Any, Any]:
        @dataclass(frozen=True)
        class Base:
            self: int
            tags: list[str] = dataclasses.field(default_factory=list)

        @dataclass(frozen=True)
        class Child(Base):
            total: float = 0.0
            doubled: float = dataclasses.field(init=False, default=0.0)

            def __post_init__(self) -> None:
                object.__setattr__(self, "doubled", 2 * self.total)

        @dataclass(frozen=True)
        class Guarded:
            value: _Checked = _Checked()  # a descriptor as the field's class attribute

        return Base, Child, Guarded

    standard, lean = make(DECORATORS["stdlib"]), make(DECORATORS["lean"])
    assert dataclasses._field_assign is before  # type: ignore[attr-defined]  # the helper is put back
    for base, child, guarded in (standard, lean):
        assert vars(base(1)) == {"self": 1, "tags": []}
        assert vars(child(self=2, tags=["a"], total=1.5)) == {
            "self": 2,
            "tags": ["a"],
            "total": 1.5,
            "doubled": 3.0,
        }
        assert guarded(value=-4).value == 4  # the descriptor still took the assignment
    direct = "__dict__" in lean[1].__init__.__code__.co_names
    assert direct is helper_known and "__dict__" not in lean[2].__init__.__code__.co_names
    assert (
        "__dict__"
        not in lean_dataclass.dataclass(frozen=True, slots=True)(
            type("S", (), {"__annotations__": {"x": "int"}})
        ).__init__.__code__.co_names
    )
