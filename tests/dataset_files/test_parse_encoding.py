"""Encodings: UTF-16 with a BOM, Latin-1 and Windows code pages, binaries."""

from __future__ import annotations

import codecs

import pytest

from dataset_files import parse_dataset

FRENCH = "nom;prénom;ville\nJosé;Hélène;Besançon\nFrançois;Zoë;Orléans\n"


@pytest.mark.parametrize(
    ("codec", "name"), [("utf-16-le", "utf-16-le"), ("utf-16-be", "utf-16-be")]
)
def test_utf16_with_bom(codec, name):
    bom = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    table = parse_dataset(bom + FRENCH.encode(codec), filename="data.csv")
    assert table.encoding == name
    assert table.columns == ["nom", "prénom", "ville"]
    assert table.rows[0] == {"nom": "José", "prénom": "Hélène", "ville": "Besançon"}
    # A BOM says what the encoding is: nothing was guessed.
    assert table.warnings == []


def test_excel_unicode_text_export():
    # Excel's "Unicode Text": UTF-16 LE with a BOM, tab-separated.
    text = "question\tanswer\n¿Dónde?\taquí\n"
    table = parse_dataset(text.encode("utf-16"), filename="export.txt")
    assert table.delimiter == "\t"
    assert table.rows == [{"question": "¿Dónde?", "answer": "aquí"}]


def test_latin1_file_is_guessed_and_reported():
    table = parse_dataset(FRENCH.encode("latin-1"), filename="data.csv")
    # cp1252 is a superset of Latin-1 for these letters; the text must be right.
    assert table.encoding in {"cp1252", "iso8859-1"}
    assert table.rows[0] == {"nom": "José", "prénom": "Hélène", "ville": "Besançon"}
    assert table.rows[1]["prénom"] == "Zoë"
    assert {"code": "encoding_guessed", "params": {"encoding": table.encoding}} in table.warnings


def test_latin1_longer_text():
    text = "texte,réponse\n" + "Le thé est très chaud dit l'élève à la fenêtre,oui\n" * 5
    table = parse_dataset(text.encode("latin-1"), filename="data.csv")
    assert table.rows[0]["texte"] == "Le thé est très chaud dit l'élève à la fenêtre"


def test_cyrillic_code_page():
    text = "вопрос,ответ\nПривет как дела,хорошо\nСъешь же ещё этих мягких булок,да\n"
    table = parse_dataset(text.encode("cp1251"), filename="data.csv")
    assert table.encoding == "cp1251"
    assert table.columns == ["вопрос", "ответ"]
    assert table.rows[0]["ответ"] == "хорошо"


def test_plain_utf8_is_not_a_guess():
    table = parse_dataset("a,b\nß,ü\n".encode(), filename="data.csv")
    assert table.encoding == "utf-8"
    assert table.warnings == []


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"PK\x03\x04\x14\x00\x06\x00rest-of-a-workbook", "zip"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "ole2"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "pdf"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "gzip"),
        (b"PAR1\x15\x04\x15", "parquet"),
        (b"a,b\n1,\x00\x00\x00\x01\x02\xff\xfe\x00", "unknown"),
    ],
)
def test_binary_files_are_not_text(raises_code, data, kind):
    error = raises_code("not_text", parse_dataset, data, filename="data.csv")
    assert error.params == {"kind": kind}


def test_utf8_nul_is_not_text(raises_code):
    error = raises_code("not_text", parse_dataset, b"a,b\n1,\x002\n", filename="data.csv")
    assert error.params == {"kind": "unknown"}


def test_broken_utf16_is_undecodable(raises_code):
    # A BOM, then an odd number of bytes: not UTF-16 after all.
    data = codecs.BOM_UTF16_LE + "a,b\n".encode("utf-16-le") + b"\x41"
    error = raises_code("undecodable", parse_dataset, data, filename="data.csv")
    assert error.params == {"encoding": "utf-16-le"}


def test_broken_utf8_after_bom_is_undecodable(raises_code):
    data = codecs.BOM_UTF8 + b"a,b\n\xff\xfe\xfa,1\n"
    error = raises_code("undecodable", parse_dataset, data, filename="data.csv")
    assert error.params == {"encoding": "utf-8-sig"}


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("question,answer\nWhat does café mean?,coffee\nIs it naïve?,yes\n", "cp1252"),
        ("q,a\n“Smart quotes” – and dashes…,ok\nit’s fine,yes\n", "cp1252"),
        (
            "question,answer\n" + "What is the capital of Françe? Answer briefly,Paris\n" * 50,
            "latin-1",
        ),
        ("frage;antwort\nGrüße aus München;ja\nÄrger über Öl;nein\n", "latin-1"),
        ("pytanie,odpowiedź\nZażółć gęślą jaźń,tak\nŁódź jest ładna,źle\n", "cp1250"),
        ("soru,cevap\nŞişli ılık bir gün geçirdi,doğru\nIğdır çok güzel,evet\n", "cp1254"),
        ("ερώτηση,απάντηση\nΠοια είναι η πρωτεύουσα της Ελλάδας;,Αθήνα\n", "cp1253"),
    ],
)
def test_code_pages_decode_to_the_original_text(text, codec):
    table = parse_dataset(text.encode(codec), filename="data.csv")
    header, first = text.split("\n")[:2]
    assert table.columns == header.split(table.delimiter)
    assert list(table.rows[0].values()) == first.split(table.delimiter)
    assert table.warnings[0]["code"] == "encoding_guessed"


def test_utf16_without_bom_is_guessed():
    # Valid UTF-8 full of NULs, so the UTF-8 reading must not win.
    text = "question,answer\nhello there,hi\nhow are you?,fine\n"
    table = parse_dataset(text.encode("utf-16-le"), filename="data.csv")
    assert table.encoding == "utf-16-le"
    assert table.rows[1] == {"question": "how are you?", "answer": "fine"}
    assert table.warnings[0]["code"] == "encoding_guessed"
