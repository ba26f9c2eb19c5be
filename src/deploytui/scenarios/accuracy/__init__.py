"""Accuracy of the int8 variants on the accuracy set (accuracy), their figures as ratios to their
fp32 parent (variants)."""
