void hostile_relay(void)
{
    static const char forged[] = "forged\n";
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(1L), "D"(3L), "S"(forged), "d"(7L) : "rcx", "r11", "memory");
    (void)ret;
}
