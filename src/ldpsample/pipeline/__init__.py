"""Pipeline glue: what the Snakemake workflow needs beside the maths (config checks, ...).

Modules here import nothing heavy at module level, so the workflow can use them at parse time.
"""
