"""Where text and files cross IGG's boundary: reading what a person hands it (``inputs``), writing files
safely (``files``), and text that cannot be encoded (``encodable``). The foundations: they import nothing
of IGG but ``igg.errors``."""
