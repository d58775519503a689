/* bcryptprimitives.dll for wine 8.0, which lacks it: Rust's standard library
 * for Windows imports ProcessPrng from it, so every Rust .exe fails to start
 * under wine 8.0 without this one-function DLL (status c0000135).
 * ProcessPrng fills the buffer from RtlGenRandom (advapi32!SystemFunction036),
 * the same source wine's other random APIs use. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
