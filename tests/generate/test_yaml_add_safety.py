"""`opkit yaml add` keeps the file's bytes, identity and other writers' entries; it never writes YAML that does not load back."""

from __future__ import annotations

import multiprocessing
import os
import stat

import pytest
import yaml

ENTRY = "custom:\n  - func: {name}(Tensor x) -> Tensor\n    op_api: all_version\n"
ADDED = b"  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"


@pytest.fixture
def fragment(tmp_path):
    path = tmp_path / "fragment.yaml"
    path.write_text(ENTRY.format(name="my_op"))
    return path


def _add(run_opkit, target, fragment):
    return run_opkit("yaml", "add", str(target), "--entry", str(fragment))


LAYOUTS = {
    # name: (file, what it must become)
    "null-section": (b"official: []\ncustom: ~\n", b"official: []\ncustom:\n" + ADDED),
    "empty-section": (b"official:\n    - func: a(Tensor x) -> Tensor\n      op_api: all_version\ncustom:\n", None),
    "empty-flow-section": (b"custom: []  # none yet\n", b"custom:  # none yet\n" + ADDED),
    "indented-by-4": (b"custom:\n    - func: b(Tensor x) -> Tensor\n      op_api: all_version\n", None),
    "wide-dash": (b"custom:\n  -   func: b(Tensor x) -> Tensor\n      op_api: all_version\n", None),
    "unindented-list": (b"custom:\n- func: b(Tensor x) -> Tensor\n  op_api: all_version", None),
    "bom-and-cr-only": (b"\xef\xbb\xbfcustom:\r  - func: b(Tensor x) -> Tensor\r    op_api: all_version\r", None),
    "crlf": (b"official: []\r\ncustom:\r\n  - func: b(Tensor x) -> Tensor\r\n    op_api: all_version\r\n", None),
    "line-separator-in-comment": ("custom:  # a\u2028# b\n  - func: b(Tensor x) -> Tensor\n    op_api: all_version\n".encode(), None),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_added_entry_loads_back_and_the_rest_is_kept_byte_for_byte(tmp_path, run_opkit, fragment, layout):
    original, expected = LAYOUTS[layout]
    target = tmp_path / "op_plugin_functions.yaml"
    target.write_bytes(original)
    code, output = _add(run_opkit, target, fragment)
    assert code == 0, output
    data = target.read_bytes()
    if expected is not None:
        assert data == expected
    assert data.startswith(b"\xef\xbb\xbf") == original.startswith(b"\xef\xbb\xbf")
    before = yaml.safe_load(original.decode("utf-8-sig")) or {}
    after = yaml.safe_load(data.decode("utf-8-sig"))
    assert after["custom"][-1] == {"func": "my_op(Tensor x) -> Tensor", "op_api": "all_version"}
    assert after["custom"][:-1] == (before.get("custom") or [])
    assert {k: v for k, v in after.items() if k != "custom"} == {k: v for k, v in before.items() if k != "custom"}
    # every original line survives in order (only insertions), apart from an emptied 'custom: ~' value
    if expected is None:
        text = data.decode("utf-8-sig")
        assert all(line in text for line in original.decode("utf-8-sig").splitlines())


def test_line_endings_are_the_files_own(tmp_path, run_opkit, fragment):
    for name, original, newline in (("cr", b"custom:\r  - func: b(Tensor x) -> Tensor\r", b"\r"), ("crlf", b"custom:\r\n  - func: b(Tensor x) -> Tensor\r\n", b"\r\n")):
        target = tmp_path / f"{name}.yaml"
        target.write_bytes(original)
        assert _add(run_opkit, target, fragment)[0] == 0
        data = target.read_bytes()
        assert data.startswith(original)
        assert data.replace(newline, b"").count(b"\r") + data.replace(newline, b"").count(b"\n") == 0, data


def test_a_symlink_is_written_through_to_its_target(tmp_path, run_opkit, fragment):
    real = tmp_path / "real.yaml"
    real.write_text("custom: []\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    assert _add(run_opkit, link, fragment)[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert b"my_op" in real.read_bytes()


def test_hard_links_all_see_the_new_entry_and_the_mode_is_kept(tmp_path, run_opkit, fragment):
    first = tmp_path / "a.yaml"
    first.write_text("custom: []\n")
    first.chmod(0o640)
    second = tmp_path / "b.yaml"
    os.link(first, second)
    assert _add(run_opkit, second, fragment)[0] == 0
    assert os.path.samefile(first, second) and b"my_op" in first.read_bytes()
    assert stat.S_IMODE(first.stat().st_mode) == 0o640


def test_the_mode_of_a_renamed_file_is_kept(tmp_path, run_opkit, fragment):
    target = tmp_path / "x.yaml"
    target.write_text("custom: []\n")
    target.chmod(0o604)
    assert _add(run_opkit, target, fragment)[0] == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert sorted(os.listdir(tmp_path)) == ["fragment.yaml", "x.yaml"]  # no temporary file left


def test_a_read_only_file_is_refused(tmp_path, run_opkit, fragment):
    target = tmp_path / "x.yaml"
    target.write_text("custom: []\n")
    target.chmod(0o444)
    code, output = _add(run_opkit, target, fragment)
    assert code == 2 and "read-only" in output and len(output.strip().splitlines()) == 1
    assert target.read_text() == "custom: []\n"
    code, output = run_opkit("yaml", "add", str(target), "--entry", str(fragment), "--check")
    assert code == 1  # only reading: allowed


@pytest.mark.parametrize(
    "existing, section",
    [
        ("my_op(Tensor x, int y) -> Tensor", "custom"),  # a second op with the same name
        ("my_op(Tensor self) -> Tensor", "custom"),
        ("my_op(Tensor x) -> Tensor", "official"),
    ],
    ids=["same-name", "same-name-other-args", "declared-in-official"],
)
def test_a_conflicting_declaration_is_exit_2_with_its_line(tmp_path, run_opkit, fragment, existing, section):
    target = tmp_path / "x.yaml"
    original = f"official: []\n{section}:\n  - func: a(Tensor x) -> Tensor\n    op_api: all_version\n  - func: {existing}\n    op_api: all_version\n"
    if section != "custom":
        original += "custom: []\n"
    target.write_text(original)
    code, output = _add(run_opkit, target, fragment)
    assert code == 2 and output.startswith(f"opkit yaml add: {target}:5: ") and len(output.strip().splitlines()) == 1
    assert target.read_text() == original


def test_another_overload_of_the_same_op_is_added(tmp_path, run_opkit, fragment):
    target = tmp_path / "x.yaml"
    target.write_text("custom:\n  - func: my_op.Scalar(Tensor x, Scalar s) -> Tensor\n    op_api: all_version\n")
    assert _add(run_opkit, target, fragment)[0] == 0


def _add_in_child(target: str, fragment: str, barrier) -> None:
    from opkit.generate.yaml_edit import add_entry, load_fragment

    entry = load_fragment(fragment)
    barrier.wait()
    add_entry(target, entry)


def test_two_simultaneous_adds_lose_nothing(tmp_path, fragment):
    """20 rounds of two `yaml add` processes released together: every entry of every round is in the file."""
    from opkit.generate.yaml_edit import add_entry, load_fragment

    target = tmp_path / "op_plugin_functions.yaml"
    target.write_text("official: []\ncustom: ~\n")
    warm_up = tmp_path / "warm_up.yaml"  # imports and caches filled before forking, so the children race
    warm_up.write_text("custom: ~\n")
    add_entry(warm_up, load_fragment(fragment))
    context = multiprocessing.get_context("fork")
    names = []
    for round_ in range(20):
        barrier = context.Barrier(2)
        children = []
        for side in "ab":
            name = f"op_{side}{round_}"
            names.append(name)
            fragment = tmp_path / f"{name}.yaml"
            fragment.write_text(ENTRY.format(name=name))
            children.append(context.Process(target=_add_in_child, args=(str(target), str(fragment), barrier)))
        for child in children:
            child.start()
        for child in children:
            child.join(30)
            assert child.exitcode == 0
    funcs = [e["func"] for e in yaml.safe_load(target.read_text())["custom"]]
    assert sorted(funcs) == sorted(f"{name}(Tensor x) -> Tensor" for name in names)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_lock_held_too_long_is_one_clear_message(tmp_path):
    import fcntl

    from opkit.generate import file_write

    target = tmp_path / "x.yaml"
    target.write_text("custom: []\n")
    with open(target) as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(file_write.FileWriteError, match=r"x.yaml is locked by another process \(waited 0.1 s\)"):
            with file_write.locked(target, timeout=0.1):
                pass
    with file_write.locked(target, timeout=0.1) as real:  # released: taken at once
        assert real == target


@pytest.mark.parametrize("name", [".x.yaml.opkit-backup", ".x.yaml.opkit-0123456789ab"])
def test_only_the_temporary_name_this_run_created_is_ever_removed(tmp_path, run_opkit, fragment, name):
    """A user's `.x.yaml.opkit-backup`, even one named exactly as opkit names its temporary files, stays."""
    target = tmp_path / "x.yaml"
    target.write_text("custom: []\n")
    (tmp_path / name).write_text("custom: [my backup]\n")
    assert _add(run_opkit, target, fragment)[0] == 0
    assert sorted(os.listdir(tmp_path)) == sorted([name, "fragment.yaml", "x.yaml"])
    assert (tmp_path / name).read_text() == "custom: [my backup]\n"


# --- writes that cannot lose data ---------------------------------------------------------------------------------


def _page_sized_yaml(size: int = 8192) -> bytes:
    """A valid op_plugin_functions.yaml of exactly ``size`` bytes: any growth needs a new page of the disk."""
    head = b"official:\n  - func: a(Tensor x) -> Tensor\n    op_api: all_version\ncustom: ~\n"
    return head + b"#" * (size - len(head) - 1) + b"\n"


@pytest.mark.parametrize("links", [1, 2])
def test_a_full_disk_leaves_the_file_byte_identical(small_disk, run_opkit, fragment, links):
    target = small_disk.path / "op_plugin_functions.yaml"
    old = _page_sized_yaml()
    target.write_bytes(old)
    if links == 2:
        os.link(target, small_disk.path / "second-name.yaml")
    small_disk.fill()
    code, output = _add(run_opkit, target, fragment)
    assert code == 2 and output.count("No space left on device") == 1 and "the file is unchanged" in output, output
    assert target.read_bytes() == old and target.stat().st_nlink == links
    assert sorted(os.listdir(small_disk.path)) == sorted([".filler", "op_plugin_functions.yaml", *(["second-name.yaml"] if links == 2 else [])])
    os.unlink(small_disk.path / ".filler")  # space again: the same command now succeeds, through every link
    assert _add(run_opkit, target, fragment)[0] == 0
    assert ADDED in target.read_bytes() and (links == 1 or (small_disk.path / "second-name.yaml").read_bytes() == target.read_bytes())


def _edit_while_reading(target, edits):
    """A program without opkit's lock that changes ``target`` ``edits`` times, each at a chosen moment."""
    from opkit.generate import yaml_edit

    real_read = yaml_edit._read_bytes
    count = {"n": 0}

    def read_then_edit(path):
        data = real_read(path)
        if count["n"] < edits:
            count["n"] += 1
            with open(target, "ab") as f:  # as an editor appending its own entry, between opkit's read and write
                f.write(b"# edited by another program %d\n" % count["n"])
        return data

    return read_then_edit


@pytest.mark.parametrize("edits", [1, 2])
def test_an_edit_by_another_program_between_read_and_write_is_kept(tmp_path, fragment, monkeypatch, edits):
    from opkit.generate import yaml_edit

    target = tmp_path / "x.yaml"
    target.write_text("official: []\ncustom: ~\n")
    entry = yaml_edit.load_fragment(fragment)
    monkeypatch.setattr(yaml_edit, "_read_bytes", _edit_while_reading(target, edits))
    edit = yaml_edit.add_entry(target, entry)
    text = target.read_bytes()
    assert edit.status == "added" and ADDED in text
    assert all(b"# edited by another program %d\n" % n in text for n in range(1, edits + 1))


def test_a_file_that_keeps_changing_is_refused_with_nothing_written(tmp_path, fragment, monkeypatch):
    from opkit.generate import yaml_edit

    target = tmp_path / "x.yaml"
    target.write_text("official: []\ncustom: ~\n")
    entry = yaml_edit.load_fragment(fragment)
    monkeypatch.setattr(yaml_edit, "_read_bytes", _edit_while_reading(target, yaml_edit.ATTEMPTS))
    with pytest.raises(yaml_edit.YamlEditError) as err:
        yaml_edit.add_entry(target, entry)
    assert str(err.value) == f"{target} was changed by another program each of the 3 times opkit read it; nothing was written (try again when that program has finished)"
    assert ADDED not in target.read_bytes() and target.read_bytes().count(b"# edited by another program") == 3


def _edit_without_lock(target: str, rounds: int, done) -> None:
    import time

    for n in range(rounds):
        with open(target, "ab") as f:
            f.write(b"# other program %d\n" % n)
        time.sleep(0.01)
    done.set()


def test_another_programs_edits_during_many_adds_are_all_kept(tmp_path, fragment):
    """The audit's case: 25 edits by a program that takes no lock, made while `yaml add` runs again and again."""
    from opkit.generate.yaml_edit import YamlEditError, add_entry, load_fragment

    target = tmp_path / "x.yaml"
    target.write_text("official: []\ncustom: ~\n")
    context = multiprocessing.get_context("fork")
    done = context.Event()
    editor = context.Process(target=_edit_without_lock, args=(str(target), 25, done))
    added = []
    editor.start()
    n = 0
    while not done.is_set() or len(added) < 5:  # after the editor stops, every add goes in
        path = tmp_path / f"op_{n}.yaml"
        path.write_text(ENTRY.format(name=f"op_{n}"))
        try:
            add_entry(target, load_fragment(path))
            added.append(f"op_{n}")
        except YamlEditError as exc:  # refused after three changed reads: nothing written, nothing lost
            assert "was changed by another program" in str(exc)
        n += 1
    editor.join(30)
    text = target.read_text()
    assert all(f"# other program {k}\n" in text for k in range(25))
    assert sorted(e["func"] for e in yaml.safe_load(text)["custom"]) == sorted(f"{name}(Tensor x) -> Tensor" for name in added)
    assert len(added) >= 5
