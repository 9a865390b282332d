"""(rules of this scope are added here)"""
