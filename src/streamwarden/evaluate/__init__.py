"""From facts to findings: the input document, the one evaluation, the Finding model, waivers,
the baseline, the run-wide writers document and the one exit-code decision."""
