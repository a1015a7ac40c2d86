s = "never closed
int a; /* never closed
