"""Analysis: from step results to the scores and findings reviewers publish."""
