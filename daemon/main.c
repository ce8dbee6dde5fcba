int main(void) { return 0; } /* PLACEHOLDER: not written yet */
