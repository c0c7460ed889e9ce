"""Extraction measured on a public benchmark (``igg eval text2kg``): Text2KGBench's files read (``answers``),
its metrics computed its way (``metrics``), recorded answers replayed through the act step (``replay``) or an
agent run through the loop (``extract``), and the run with its report (``text2kg``)."""
