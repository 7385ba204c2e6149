"""Looking inside: head surgery, logit lens, attribution, importance, comparison, the frame."""
