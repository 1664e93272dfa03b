//! `#[derive(Equivalence)]` for [ferrompi](https://docs.rs/ferrompi): makes a struct a type
//! that travels in MPI messages, as an MPI struct datatype built from the compiler's own field
//! offsets. Use it through `ferrompi::Equivalence` (feature `derive`, on by default).
//!
//! What the derive writes, for a struct of fields `f1: F1, f2: F2, ...`:
//!
//! - `unsafe impl Equivalence`: one value is one element of a datatype made with
//!   `MPI_Type_create_struct` from `Field::of::<Fi>(offset_of!(Self, fi))` for each field,
//!   resized to `size_of::<Self>()` (so padding is in no field: never sent, never written by
//!   a receive), committed once and kept in a `static` (`TypeCache`) or, for a generic
//!   struct, in the crate's table of generic instantiations (`cached_by_type`);
//! - `NEEDS_REPAIR` if any field's type needs it, and a `repair_received` that repairs each
//!   such field in place (a `bool` field received as any byte reads as `true` for non-zero);
//! - a bound `T: Equivalence` on each type parameter.
//!
//! With `#[equivalence(elementwise)]`, for a struct whose fields are all of one element type
//! (`f64`, `[f64; 3]`, another such struct) with no padding, it writes instead:
//!
//! - `unsafe impl Equivalence` with the element's predefined datatype and `ELEMENTS` the sum
//!   of the fields' (the struct is to MPI what an array of its elements is: no derived type);
//! - `unsafe impl Elementwise` with that `Element`, so the predefined reductions apply element
//!   by element;
//! - a bound `Fi: Elementwise<Element = ...>` per field (a field of another element type does
//!   not compile) and a check that the struct's size is its elements' (padding does not compile).
//!
//! It refuses, with a compile error: enums and unions (not every bit pattern is a value),
//! `#[repr(packed)]` structs (their fields may be unaligned), structs without fields,
//! lifetime parameters, and fields that are references, raw pointers or function pointers
//! (addresses mean nothing in another process). Every other field type must be `Equivalence`
//! itself, which the compiler checks with a message naming the field's type.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, GenericParam, Index, Member, Type, parse_macro_input};

/// Derives `ferrompi::Equivalence` for a struct (see the crate docs).
#[proc_macro_derive(Equivalence, attributes(equivalence))]
pub fn derive_equivalence(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        Data::Enum(data) => {
            return Err(Error::new(
                data.enum_token.span,
                "Equivalence cannot be derived for an enum: not every bit pattern of it is a \
                 value, and MPI has no datatype for its tag; send a struct (or a number that \
                 encodes the variant), or a serde value",
            ));
        }
        Data::Union(data) => {
            return Err(Error::new(
                data.union_token.span,
                "Equivalence cannot be derived for a union: MPI cannot know which field holds \
                 the value",
            ));
        }
    };
    for attr in &input.attrs {
        if attr.path().is_ident("repr") {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("packed") {
                    return Err(meta.error(
                        "Equivalence cannot be derived for a #[repr(packed)] struct: its fields \
                         may be unaligned; use #[repr(C)] and let the derive skip the padding",
                    ));
                }
                // `C`, `transparent`, `align(N)`: nothing to check.
                if meta.input.peek(syn::token::Paren) {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    content.parse::<TokenStream2>()?;
                }
                Ok(())
            })?;
        }
    }
    for param in &input.generics.params {
        if let GenericParam::Lifetime(lifetime) = param {
            return Err(Error::new(
                lifetime.span(),
                "Equivalence cannot be derived for a struct with a lifetime: a value that \
                 travels to another process cannot borrow",
            ));
        }
    }
    let members: Vec<(Member, &Type)> = match fields {
        Fields::Named(named) => named
            .named
            .iter()
            .map(|f| (Member::Named(f.ident.clone().expect("named field")), &f.ty))
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| (Member::Unnamed(Index::from(i)), &f.ty))
            .collect(),
        Fields::Unit => Vec::new(),
    };
    if members.is_empty() {
        return Err(Error::new(
            name.span(),
            "Equivalence cannot be derived for a struct without fields: it has no data to send",
        ));
    }
    for (_, ty) in &members {
        refuse_addresses(ty)?;
    }
    let elementwise = elementwise(input)?;

    let mut generics = input.generics.clone();
    let generic = !generics.params.is_empty();
    {
        let type_params: Vec<_> = generics.type_params().map(|t| t.ident.clone()).collect();
        let clause = generics.make_where_clause();
        for ident in type_params {
            clause
                .predicates
                .push(syn::parse_quote!(#ident: ::ferrompi::Equivalence));
        }
    }
    let types: Vec<&Type> = members.iter().map(|(_, ty)| *ty).collect();
    let repairs = members.iter().map(|(member, ty)| {
        quote! {
            <#ty as ::ferrompi::Equivalence>::repair_received(&raw mut (*value).#member, 1);
        }
    });
    let repair = quote! {
        const NEEDS_REPAIR: bool =
            false #(|| <#types as ::ferrompi::Equivalence>::NEEDS_REPAIR)*;

        #[inline]
        unsafe fn repair_received(ptr: *mut Self, len: usize) {
            if <Self as ::ferrompi::Equivalence>::NEEDS_REPAIR {
                for i in 0..len {
                    // SAFETY: the caller's `len` writable values at `ptr`; each field is
                    // repaired in place through a raw pointer, as its own type's repair
                    // requires.
                    unsafe {
                        let value = ptr.add(i);
                        #(#repairs)*
                    }
                }
            }
        }
    };
    if elementwise {
        return Ok(expand_elementwise(name, &mut generics, &types, &repair));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let fields_list = members.iter().map(|(member, ty)| {
        quote_spanned! {ty.span()=>
            ::ferrompi::datatype::Field::of::<#ty>(::core::mem::offset_of!(Self, #member))
        }
    });
    let build = quote! {
        || ::ferrompi::datatype::struct_datatype::<Self>(&[#(#fields_list),*])
    };
    let lookup = if generic {
        quote! { ::ferrompi::datatype::cached_by_type::<Self>(#build) }
    } else {
        quote! {
            static CACHE: ::ferrompi::datatype::TypeCache = ::ferrompi::datatype::TypeCache::new();
            CACHE.get_or_build(#build)
        }
    };
    Ok(quote! {
        // SAFETY (of the generated impl): the datatype is MPI_Type_create_struct over each
        // field's own Equivalence datatype at the field's offset (offset_of!), resized to
        // size_of::<Self>(), so one element is one value and reaches only its fields' bytes;
        // a received value is repaired field by field where a field's type needs it.
        #[automatically_derived]
        unsafe impl #impl_generics ::ferrompi::Equivalence for #name #ty_generics #where_clause {
            const ELEMENTS: usize = 1;
            const PREDEFINED: bool = false;

            #[inline(always)]
            fn datatype() -> ::ferrompi::Datatype {
                #lookup
            }

            #repair
        }
    })
}

/// Whether the struct asks for `#[equivalence(elementwise)]`; any other option is an error.
fn elementwise(input: &DeriveInput) -> syn::Result<bool> {
    let mut elementwise = false;
    for attr in &input.attrs {
        if attr.path().is_ident("equivalence") {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("elementwise") {
                    elementwise = true;
                    Ok(())
                } else {
                    Err(meta
                        .error("unknown option: #[equivalence(elementwise)] is the one there is"))
                }
            })?;
        }
    }
    Ok(elementwise)
}

/// The impls of a struct all of whose fields are of one element type (see the crate docs):
/// to MPI, `ELEMENTS` values of the first field's element, end to end.
fn expand_elementwise(
    name: &syn::Ident,
    generics: &mut syn::Generics,
    types: &[&Type],
    repair: &TokenStream2,
) -> TokenStream2 {
    let first = types[0];
    let element = quote! { <#first as ::ferrompi::Elementwise>::Element };
    let generic = !generics.params.is_empty();
    // Every field of the first field's element: for a generic struct a bound of the impls (an
    // instantiation of other elements is not `Elementwise`), for another a check where it is
    // defined, naming the field whose element differs.
    let same_element = if generic {
        let clause = generics.make_where_clause();
        clause
            .predicates
            .push(syn::parse_quote_spanned! {first.span()=> #first: ::ferrompi::Elementwise });
        for ty in &types[1..] {
            clause
                .predicates
                .push(syn::parse_quote_spanned! {ty.span()=>
                    #ty: ::ferrompi::Elementwise<Element = #element>
                });
        }
        None
    } else {
        let checks = types.iter().map(|ty| {
            quote_spanned! {ty.span()=> same_element::<#first, #ty>(); }
        });
        Some(quote! {
            const _: fn() = || {
                fn same_element<A: ::ferrompi::Elementwise, B: ::ferrompi::Elementwise<Element = A::Element>>() {}
                #(#checks)*
            };
        })
    };
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let elements = quote! { 0 #(+ <#types as ::ferrompi::Equivalence>::ELEMENTS)* };
    let message = format!(
        "#[equivalence(elementwise)]: `{name}` has padding (its size is not its fields' \
         elements'); add a field for it, or derive without elementwise"
    );
    let size_check = quote! {
        ::core::mem::size_of::<#name #ty_generics>()
            == (#elements) * ::core::mem::size_of::<#element>()
    };
    // A struct without parameters is checked where it is defined; a generic one where an
    // instantiation's ELEMENTS is first used (every operation uses it).
    let early =
        (!generic).then(|| quote! { const _: () = ::core::assert!(#size_check, #message); });
    quote! {
        #early
        #same_element

        // SAFETY (of the generated impls): every field is `Elementwise` with the first field's
        // element (the where clause or the check above), and the struct's size is its fields'
        // elements' (the check in ELEMENTS), so a value is ELEMENTS elements end to end, no
        // padding between: what an array of the element is to MPI, with the element's
        // predefined datatype.
        #[automatically_derived]
        unsafe impl #impl_generics ::ferrompi::Equivalence for #name #ty_generics #where_clause {
            const ELEMENTS: usize = {
                ::core::assert!(#size_check, #message);
                #elements
            };

            #[inline(always)]
            fn datatype() -> ::ferrompi::Datatype {
                <#element as ::ferrompi::Equivalence>::datatype()
            }

            #repair
        }

        #[automatically_derived]
        unsafe impl #impl_generics ::ferrompi::Elementwise for #name #ty_generics #where_clause {
            type Element = #element;
        }
    }
}

/// Refuses a field type that is an address: it means nothing in another process.
fn refuse_addresses(ty: &Type) -> syn::Result<()> {
    let what = match ty {
        Type::Reference(_) => "a reference",
        Type::Ptr(_) => "a raw pointer",
        Type::BareFn(_) => "a function pointer",
        Type::Array(array) => return refuse_addresses(&array.elem),
        Type::Tuple(_) => "a tuple (its layout is unspecified; use a struct or an array)",
        Type::Paren(inner) => return refuse_addresses(&inner.elem),
        Type::Group(inner) => return refuse_addresses(&inner.elem),
        _ => return Ok(()),
    };
    Err(Error::new(
        ty.span(),
        format!(
            "Equivalence cannot be derived for a struct with {what} field: send the data, \
             not its address"
        ),
    ))
}
