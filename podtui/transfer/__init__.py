"""Moving files to and from pods: runpodctl's output parser, and (to come) the transfer queue."""
