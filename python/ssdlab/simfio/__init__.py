"""`ssdlab sim fio JOBFILE`: fio job files on the simulator, answered in fio's JSON."""
