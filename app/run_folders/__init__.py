"""Reading run folders for the viewer: training and SFT runs, evaluation reports, comparisons, experiments.

No web imports here: the scanner and readers return plain data, and every problem they meet (a missing file,
a truncated or corrupted line, a document that is not JSON) becomes a message on the result instead of an
exception, so a half-written run is shown with what is missing. Nothing here ever writes into a run folder.
"""
