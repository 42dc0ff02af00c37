"""Reading an events table: which files it is (:mod:`.files`), scanning it lazily and the one
error type (:mod:`.scan`), its record-level CSV faults (:mod:`.csv_lines`), the checks of its
values (:mod:`.table_checks`) and the filtered, renamed frame every histogram starts from
(:mod:`.prepared`).
"""
