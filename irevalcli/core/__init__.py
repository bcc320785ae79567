"""The data model: Qrels + Run -> one ranked, labelled query x doc table, and the exact
segmented numerics measures compute with. Below measures/ (measures read the table) and
above io/."""
