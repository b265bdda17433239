"""emu.present.data: published numbers are loaded exactly, and only with their provenance."""

import csv

import pandas as pd
import pytest

from emu.present import data

LMBENCH = "mackerras2003_table2_lmbench"


def test_real_dataset_loads_with_exact_values():
    df = data.load(LMBENCH)
    assert list(df["kernel"]) == ["original", "optimized"]
    rows = df.set_index("kernel")
    # Mackerras 2003, Table 2: printed as "795." and "659."
    assert rows.loc["original", "fork_proc"] == 795.0
    assert rows.loc["optimized", "fork_proc"] == 659.0
    assert rows.loc["original", "exec_proc"] == 5065
    assert rows.loc["optimized", "exec_proc"] == 2254
    assert rows.loc["original", "stat"] == 3.90
    assert rows.loc["optimized", "selct_tcp"] == 40.3
    assert rows.loc["optimized", "sig_hndl"] == 6.13
    assert (df["mhz"] == 400).all()
    assert (df["os"] == "Linux 2.5.66").all()
    # The printed text is kept verbatim next to our reading of it.
    assert list(df["sh_proc_printed"]) == ["23.K", "11.K"]
    assert list(df["sh_proc"]) == [23000.0, 11000.0]


def test_real_dataset_provenance():
    df = data.load(LMBENCH)
    assert set(df["source"]) == {"Mackerras 2003"}
    assert set(df["table"]) == {"Table 2"}
    assert data.provenance(df) == "Source: Mackerras 2003, Table 2, section 2.2."


def test_provenance_names_the_seed_lines_of_one_section_together():
    """A row per line of a table, each naming its seed line, is one place with its lines
    as ranges; other places stay as they are, in order of appearance."""
    import pandas as pd
    pages = ["section 4.5 (seed line 440)", "section 4.5 (seed line 441)", "section 2",
             "section 4.5 (seed lines 442-444)", "section 4.5 (seed line 450)",
             "section 1 (seed line 9)"]
    df = pd.DataFrame({"source": "Yun 2011", "table": "Table 1", "page": pages})
    assert data.provenance(df) == ("Source: Yun 2011, Table 1, section 4.5 (seed lines 440-444, "
                                   "450); Yun 2011, Table 1, section 2; Yun 2011, Table 1, "
                                   "section 1 (seed line 9).")
    assert data.provenance(data.load("yun2011_table1_improvement")) == \
        "Source: Yun 2011, Table 1, section 4.5 (seed lines 440-459)."


def test_every_shipped_dataset_follows_the_convention():
    files = sorted(data.DATA_DIR.glob("*.csv"))
    assert files, "data/ holds no CSV file"
    for path in files:
        df = data.read_csv(path)
        assert len(df) > 0, path
        # Each number is exactly float() of the text in the file.
        with path.open(newline="") as f:
            raw = list(csv.DictReader(f))
        for col in df.select_dtypes("number").columns:
            for i, row in enumerate(raw):
                assert df.loc[i, col] == float(row[col]), (path.name, i, col)


def test_printed_and_provenance_columns_stay_text(tmp_path):
    (tmp_path / "t.csv").write_text(
        "x,x_printed,source,table,page\n"
        "795.0,795.,Someone 2001,Table 1,5\n"
    )
    df = data.load("t", directory=tmp_path)
    assert df.loc[0, "x"] == 795.0
    assert df.loc[0, "x_printed"] == "795."
    assert df.loc[0, "page"] == "5"


def test_rejects_missing_provenance_column(tmp_path):
    path = tmp_path / "no_page.csv"
    path.write_text("x,source,table\n1.0,Someone 2001,Table 1\n")
    with pytest.raises(ValueError, match=r"no_page\.csv.*missing provenance column.*page"):
        data.load("no_page", directory=tmp_path)


def test_rejects_empty_provenance_cell(tmp_path):
    path = tmp_path / "hole.csv"
    path.write_text(
        "x,source,table,page\n"
        "1.0,Someone 2001,Table 1,p.3\n"
        "2.0,Someone 2001,,p.3\n"
    )
    with pytest.raises(ValueError, match=r"hole\.csv, line 3 \(data row 2\): empty provenance cell 'table'"):
        data.read_csv(path)


def test_rejects_blank_provenance_cell(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text("x,source,table,page\n1.0,   ,Table 1,p.3\n")
    with pytest.raises(ValueError, match="empty provenance cell 'source'"):
        data.read_csv(path)


def test_unknown_dataset_names_the_file():
    with pytest.raises(FileNotFoundError, match="no_such_table"):
        data.load("no_such_table")


def test_provenance_lists_each_source_once():
    df = pd.DataFrame({
        "v": [1, 2, 3],
        "source": ["A 2001", "A 2001", "B 2002"],
        "table": ["Table 1", "Table 1", "Figure 3"],
        "page": ["p.2", "p.2", "section 4"],
    })
    assert data.provenance(df) == "Source: A 2001, Table 1, p.2; B 2002, Figure 3, section 4."
