"""A loaded model at work: the bundle, decoding, the teacher-forced pass, evaluation."""
