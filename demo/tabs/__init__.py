"""One module per tab; each `build(lab)` lays out its tab inside the enclosing gr.Blocks."""
